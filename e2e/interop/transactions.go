package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The transactions scenario (the same in every checker that has a
// transactional producer): on prefix-txn, with transactional.id
// prefix-txn-id, three transactions of k = txnPerTxn(count) records
// each, records 0..3k-1 of the record spec: the first committed, the
// second aborted after its records were acknowledged (so they are in the
// log), the third committed. Then the client's own read_committed
// consumer (assigned every partition, from the start, no group) must
// read exactly records [0,k) and [2k,3k), each once. The runner checks
// the topic again with franz-go (verifyStoredTxn): read_committed sees
// exactly the committed records, read_uncommitted all 3k.

// txnPerTxn is how many records each of the scenario's transactions has.
func txnPerTxn(count int) int { return max(count/10, 1) }

// txnAborted reports whether record i falls in the aborted transaction.
func txnAborted(i, k int) bool { return i/k == 1 }

// checkCommitted compares the values a read_committed consumer read
// (in any order) with the committed records of the scenario.
func checkCommitted(values [][]byte, k int) error {
	want := map[string]int{}
	for i := range 3 * k {
		want[string(valueOf(i))] = i
	}
	seen := map[int]int{}
	var errs []string
	for _, v := range values {
		i, ok := want[string(v)]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("a record not sent: %.30q", v))
		case txnAborted(i, k):
			errs = append(errs, fmt.Sprintf("record %d of the aborted transaction", i))
		}
		if ok {
			if seen[i]++; seen[i] == 2 {
				errs = append(errs, fmt.Sprintf("record %d twice", i))
			}
		}
	}
	missing := 0
	for i := range 3 * k {
		if !txnAborted(i, k) && seen[i] == 0 {
			missing++
		}
	}
	if missing > 0 {
		errs = append(errs, fmt.Sprintf("%d of the %d committed records missing", missing, 2*k))
	}
	if len(errs) > 0 {
		return fmt.Errorf("read_committed: %s", strings.Join(errs[:min(3, len(errs))], "; "))
	}
	return nil
}

// readTxnTopic reads topic from the start with franz-go under level until
// it has want records and then for a quiet half second more (so extra
// records show), or until ctx ends.
func readTxnTopic(ctx context.Context, bootstrap, topic string, level kgo.IsolationLevel, want int) ([][]byte, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(level), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var values [][]byte
	for {
		wait := 20 * time.Second
		if len(values) >= want {
			wait = 500 * time.Millisecond
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		fs := cl.PollFetches(pctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) { values = append(values, r.Value); n++ })
		if n == 0 {
			if len(values) < want {
				return values, fmt.Errorf("%d of %d records read", len(values), want)
			}
			return values, nil
		}
	}
}

// verifyStoredTxn re-reads a passing client's prefix-txn with franz-go
// and turns the cell into a failure when read_committed does not give
// exactly the committed records or read_uncommitted not all of them.
func verifyStoredTxn(ctx context.Context, bootstrap, prefix string, count int, rep *Report) {
	if rep.Results["transactions"].Status != Pass {
		return
	}
	k := txnPerTxn(count)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	topic := prefix + "-txn"
	committed, err := readTxnTopic(cctx, bootstrap, topic, kgo.ReadCommitted(), 2*k)
	if err == nil {
		err = checkCommitted(committed, k)
	}
	if err != nil {
		rep.set("transactions", Fail, "the runner's franz-go read_committed consumer: %v", err)
		return
	}
	all, err := readTxnTopic(cctx, bootstrap, topic, kgo.ReadUncommitted(), 3*k)
	if err == nil && len(all) != 3*k {
		err = fmt.Errorf("%d records, want %d", len(all), 3*k)
	}
	if err != nil {
		rep.set("transactions", Fail, "the runner's franz-go read_uncommitted consumer (the aborted records must be in the log): %v", err)
	}
}

// transactionsCell sets the transactions cell of a Go library's report
// from what its scenario returned.
func transactionsCell(rep *Report, k int, values [][]byte, err error) {
	if err == nil {
		err = checkCommitted(values, k)
	}
	switch err.(type) {
	case nil:
		rep.set("transactions", Pass, "commit, abort, commit of %d records each; read_committed read the committed ones", k)
	case errLimit:
		rep.set("transactions", Limit, "%v", err)
	default:
		rep.set("transactions", Fail, "%v", err)
	}
}
