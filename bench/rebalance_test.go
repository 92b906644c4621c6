package bench

import (
	"context"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// A small group on an in-process samsa, under both protocols: the run
// completes with a formation and one join and one leave measured (no
// timing asserted: figures belong in docs/performance.md).
func TestRunRebalanceSmall(t *testing.T) {
	n := testkit.StartInProcess(t, "group.initial.rebalance.delay.ms", "0",
		"group.consumer.heartbeat.interval.ms", "500", "offsets.topic.num.partitions", "2")
	for _, protocol := range []string{ProtocolClassic, ProtocolConsumer} {
		t.Run(protocol, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			w := RebalanceWorkload{Brokers: []string{n.Addr}, Topic: "rebalance-" + protocol, Partitions: 6,
				Members: 3, Protocol: protocol, Repetitions: 1}
			res, err := RunRebalance(ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			if res.Form <= 0 || len(res.Joins) != 1 || len(res.Leaves) != 1 || res.JoinMedian() != res.Joins[0] {
				t.Fatalf("result %+v: want a formation, one join and one leave", res)
			}
		})
	}
	if _, err := RunRebalance(context.Background(), RebalanceWorkload{Brokers: []string{n.Addr}, Topic: "x",
		Partitions: 1, Members: 1, Protocol: "eager"}); err == nil {
		t.Fatal("an unknown protocol was accepted")
	}
}

func TestMedian(t *testing.T) {
	if got := median([]time.Duration{5, 1, 3}); got != 3 {
		t.Fatalf("median = %v", got)
	}
	if got := median([]time.Duration{4, 1, 3, 2}); got != 2 {
		t.Fatalf("median of four = %v", got)
	}
	if median(nil) != 0 {
		t.Fatal("median of none")
	}
}
