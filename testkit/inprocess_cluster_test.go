package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// An in-process cluster serves a replicated topic end to end, and keeps
// serving it when one broker restarts.
func TestInProcessCluster(t *testing.T) {
	c := StartInProcessCluster(t, 3)
	adm, _ := c.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if resp, err := adm.CreateTopic(ctx, 3, 3, nil, "ipc"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	p := c.Client(t, kgo.DefaultProduceTopic("ipc"), kgo.RequiredAcks(kgo.AllISRAcks()))
	for i := range 50 {
		if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	c.Broker(2).Restart()
	cons := c.Client(t, kgo.ConsumeTopics("ipc"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 50 && ctx.Err() == nil {
		got += cons.PollFetches(ctx).NumRecords()
	}
	if got != 50 {
		t.Fatalf("consumed %d of 50", got)
	}
}
