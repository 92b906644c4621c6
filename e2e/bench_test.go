package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/bench"
)

// bench consume asked for more records than the topic holds stops once
// nothing has arrived for its idle timeout, and says how many it read,
// instead of waiting for ever.
func TestBenchConsumeGivesUpWhenTheTopicRunsDry(t *testing.T) {
	b := sharedBroker(t)
	adm := newAdmin(t, b.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := topicName(t, "dry")
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, b.Addr(), kgo.DefaultProduceTopic(topic))
	for i := range 100 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	w := bench.DefaultWorkload()
	w.Brokers, w.Topic, w.Partitions, w.Records = []string{b.Addr()}, topic, 2, 200
	w.IdleTimeout = time.Second
	began := time.Now()
	res, err := bench.RunConsume(ctx, w, nil)
	if err == nil || !strings.Contains(err.Error(), "read 100 of the 200") {
		t.Fatalf("consume of 200 from a topic of 100: %v (result %+v)", err, res)
	}
	if res.Records != 100 {
		t.Fatalf("read %d records, want the 100 there are", res.Records)
	}
	t.Logf("gave up after %v: %v", time.Since(began).Round(time.Millisecond), err)
}
