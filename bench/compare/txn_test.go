package compare

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// The transactional workloads' harness against an in-process samsa:
// every transaction ends, every 5th aborted, and a read_committed reader
// gets exactly the committed records while read_uncommitted gets all.
func TestRunTransactions(t *testing.T) {
	n := testkit.StartInProcess(t, "samsa.transactions.enable", "true", "transaction.state.log.num.partitions", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := createTopic(ctx, n.Addr, "txn-bench", txnPartitions); err != nil {
		t.Fatal(err)
	}
	res, err := RunTransactions(ctx, n.Addr, "txn-bench", 40, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Each of the 4 producers aborts its 5th, 10th, ... transaction:
	// 10 each, 2 of them aborted.
	if res.Txns != 40 || res.Records != 400 || res.Committed != 320 || res.Latency.Count != 40 || res.TxnsPerS <= 0 {
		t.Fatalf("result %+v, want 40 transactions, 400 records, 320 committed", res)
	}
	for _, c := range []struct {
		committed bool
		want      int64
	}{{false, 400}, {true, 320}} {
		if _, err := consumeIsolated(ctx, n.Addr, "txn-bench", c.want, c.committed); err != nil {
			t.Errorf("read_committed %v: %v", c.committed, err)
		}
	}
}

// The transactional figures get charts of their own.
func TestTxnCharts(t *testing.T) {
	r := &Run{Configs: []ConfigInfo{{Name: "samsa", Brokers: 1}, {Name: "kafka", Brokers: 1}}}
	for _, cfg := range []string{"samsa", "kafka"} {
		r.Measurements = append(r.Measurements,
			Measurement{cfg, 1, Figure{"10 transactions of 1 record(s), commit each", "transactions/s", "txn/s", 100, false}},
			Measurement{cfg, 1, Figure{"13 read_committed vs read_uncommitted consumption", "read_committed records/s", "records/s", 1000, false}})
	}
	charts, err := r.WriteCharts(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(charts, []string{"x-transactions.svg", "x-txn-consume.svg"}) {
		t.Fatalf("charts %v", charts)
	}
}
