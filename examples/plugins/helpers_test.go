package plugins

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/plugin"
	"github.com/samsa-io/samsa/pkg/samsa"
)

// startBroker starts a broker with plugins through pkg/samsa on a free
// loopback port and data in dir, stopped when t ends (or by the caller).
func startBroker(t *testing.T, dir string, plugins ...plugin.Plugin) *samsa.Broker {
	t.Helper()
	return startBrokerWith(t, dir, prometheus.NewRegistry(), plugins...)
}

// startBrokerWith is startBroker with the plug-ins' metrics in reg.
func startBrokerWith(t *testing.T, dir string, reg prometheus.Registerer, plugins ...plugin.Plugin) *samsa.Broker {
	t.Helper()
	b, err := samsa.Start(samsa.Options{
		Environ: []string{}, // the test's environment must not configure the broker
		Properties: map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": dir, "num.network.threads": "1",
			"group.initial.rebalance.delay.ms": "0"},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Plugins: plugin.Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Metrics: reg},
	}, plugins...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, b) })
	return b
}

// stopped are the brokers a test stopped itself, so cleanup leaves them.
var stopped sync.Map

func stop(t *testing.T, b *samsa.Broker) {
	t.Helper()
	if _, done := stopped.LoadOrStore(b, true); done {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.Stop(ctx); err != nil {
		t.Errorf("stopping the broker: %v", err)
	}
}

func client(t *testing.T, b *samsa.Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addr())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func createTopics(t *testing.T, b *samsa.Broker, partitions int32, topics ...string) {
	t.Helper()
	resps, err := kadm.NewClient(client(t, b)).CreateTopics(context.Background(), partitions, 1, nil, topics...)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func produce(t *testing.T, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readUntil reads topic from its start until done says the records read
// so far are enough, failing t after a deadline.
func readUntil(t *testing.T, b *samsa.Broker, topic string, done func([]*kgo.Record) bool) []*kgo.Record {
	t.Helper()
	cl := client(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got []*kgo.Record
	for !done(got) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %d records after 60s, not yet what the test waits for", topic, len(got))
		}
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got = append(got, fs.Records()...)
	}
	return got
}
