package plugins

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSamsaWithPluginsBinary builds the example binary (a main around
// samsa.Run), runs it as its own process configured by SAMSA_*
// variables, routes a record through its router plug-in, and stops it
// with SIGTERM: it must exit 0.
func TestSamsaWithPluginsBinary(t *testing.T) {
	p := startBinary(t)
	addr := p.addr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		_, err := adm.CreateTopics(ctx, 1, 1, nil, "orders", "orders-eu", "orders-us", "orders-unrouted")
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the binary never served Kafka on %s: %v", addr, err)
		}
	}
	rec := &kgo.Record{Topic: "orders", Value: []byte("tea"), Headers: []kgo.RecordHeader{{Key: "region", Value: []byte("eu")}}}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	reader, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("orders-eu"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	fs := reader.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "tea" {
		t.Fatalf("orders-eu holds %v", recs)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		p.waited = true
		if err != nil {
			t.Fatalf("after SIGTERM the binary exited with %v, want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the binary did not exit within 30s of SIGTERM")
	}
}
