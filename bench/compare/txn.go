package compare

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/bench"
)

// The transactional workloads (issue 18's performance figures): how many
// transactions per second franz-go's transactional producer completes at
// 1, 10 and 100 records per transaction, and what reading a
// transactional topic with read_committed costs against
// read_uncommitted. Each broker runs them with its defaults, so samsa's
// markers (and the coordinator's records) are fsynced before the
// transaction is answered, Kafka's are not; the samsa-noflush and
// kafka-flush1 configurations give the matched pairs as for the other
// workloads.

// TxnProducers is how many transactional producers (one transactional id
// each) run side by side: one producer's transactions are strictly
// sequential (begin, produce, commit and wait), so one alone measures the
// round trips, not the broker.
const TxnProducers = 4

// txnPartitions is the partition count of the transactional topics: a
// transaction of 10 or 100 records touches all of them (records are
// spread round robin), one of a single record touches one.
const txnPartitions = 3

// txnRecordSize is each record's value size, as the produce workloads'.
const txnRecordSize = 100

// TxnWorkloads returns workloads 10 to 13 at scale.
func TxnWorkloads(scale float64) []Workload {
	perTxn := []struct {
		n, records int
		txns       int64
	}{
		// Kafka flushing every message commits some 15-20 a second
		// here: these counts keep each workload within minutes at scale 1.
		{10, 1, scaled(2000, scale, 200)},
		{11, 10, scaled(2000, scale, 200)},
		{12, 100, scaled(500, scale, 50)},
	}
	var list []Workload
	for _, w := range perTxn {
		name := fmt.Sprintf("%d transactions of %d record(s), commit each", w.n, w.records)
		topic := fmt.Sprintf("w%d-txn", w.n)
		records, txns := w.records, w.txns
		list = append(list, Workload{Name: name, PlaintextOnly: true,
			Command: fmt.Sprintf("%d franz-go transactional producers run %d transactions in all (begin, %d × %d B records round robin over %d partitions, commit), acks=all",
				TxnProducers, txns, records, txnRecordSize, txnPartitions),
			Run: func(ctx context.Context, b *Running) ([]Figure, error) {
				if err := createTopic(ctx, b.Addr, topic, txnPartitions); err != nil {
					return nil, err
				}
				before, _ := b.Usage()
				res, err := RunTransactions(ctx, b.Addr, topic, txns, records, 0)
				if err != nil {
					return nil, err
				}
				after, _ := b.Usage()
				return []Figure{
					{name, "transactions/s", "txn/s", res.TxnsPerS, false},
					{name, "records/s", "records/s", res.RecordsPerS, false},
					{name, "txn p50", "ms", res.Latency.P50, true},
					{name, "txn p99", "ms", res.Latency.P99, true},
					{name, "broker CPU", "CPU-s", after.CPUSeconds - before.CPUSeconds, true},
				}, nil
			}})
	}
	consName := "13 read_committed vs read_uncommitted consumption"
	consTxns := scaled(2000, scale, 200)
	list = append(list, Workload{Name: consName, PlaintextOnly: true,
		Command: fmt.Sprintf("fill: %d transactions of 100 × %d B records over %d partitions, every 10th aborted; then read it all from the start with read_uncommitted, then with read_committed (franz-go, one consumer)",
			consTxns, txnRecordSize, txnPartitions),
		Run: func(ctx context.Context, b *Running) ([]Figure, error) {
			const topic = "w13-txn-consume"
			if err := createTopic(ctx, b.Addr, topic, txnPartitions); err != nil {
				return nil, err
			}
			fill, err := RunTransactions(ctx, b.Addr, topic, consTxns, 100, 10)
			if err != nil {
				return nil, fmt.Errorf("filling %s: %w", topic, err)
			}
			var figs []Figure
			var took [2]time.Duration
			for i, committed := range []bool{false, true} {
				want, level := fill.Records, "read_uncommitted"
				if committed {
					want, level = fill.Committed, "read_committed"
				}
				before, _ := b.Usage()
				d, err := consumeIsolated(ctx, b.Addr, topic, want, committed)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", level, err)
				}
				after, _ := b.Usage()
				took[i] = d
				figs = append(figs,
					Figure{consName, level + " records/s", "records/s", float64(want) / d.Seconds(), false},
					Figure{consName, level + " broker CPU", "CPU-s", after.CPUSeconds - before.CPUSeconds, true})
			}
			return append(figs, Figure{consName, "read_committed time ÷ read_uncommitted time", "×",
				took[1].Seconds() / took[0].Seconds(), true}), nil
		}})
	return list
}

// TxnResult is what RunTransactions measured.
type TxnResult struct {
	Txns, Records, Committed int64 // Committed: records of committed transactions
	Elapsed                  time.Duration
	TxnsPerS, RecordsPerS    float64
	Latency                  bench.Summary // begin to the commit's answer, per transaction
}

// RunTransactions runs txns transactions of perTxn records on topic
// with TxnProducers transactional producers, each its share in turn;
// every abortEvery-th transaction of a producer is aborted instead of
// committed (0: none).
func RunTransactions(ctx context.Context, addr, topic string, txns int64, perTxn, abortEvery int) (TxnResult, error) {
	value := make([]byte, txnRecordSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	lat := bench.NewLatency()
	var committed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, TxnProducers)
	// A run of its own per call: a transactional id left from an earlier
	// workload on the same broker would be fenced or recovered first.
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	start := time.Now()
	for p := range TxnProducers {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
			kgo.TransactionalID(fmt.Sprintf("bench-%s-%s-%d", topic, run, p)), kgo.TransactionTimeout(time.Minute),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0))
		if err != nil {
			return TxnResult{}, err
		}
		defer cl.Close()
		// Each producer its share, so which transactions abort is fixed.
		share := txns / TxnProducers
		if int64(p) < txns%TxnProducers {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range int(share) {
				began := time.Now()
				commit := abortEvery == 0 || i%abortEvery != abortEvery-1
				if err := transact(ctx, cl, value, perTxn, commit); err != nil {
					errs <- err
					return
				}
				lat.Record(time.Since(began))
				if commit {
					committed.Add(int64(perTxn))
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return TxnResult{}, err
	default:
	}
	r := TxnResult{Txns: txns, Records: txns * int64(perTxn), Committed: committed.Load(), Elapsed: elapsed, Latency: lat.Summary()}
	r.TxnsPerS = float64(r.Txns) / elapsed.Seconds()
	r.RecordsPerS = float64(r.Records) / elapsed.Seconds()
	return r, nil
}

// transact runs one transaction of n records and commits (or aborts) it.
func transact(ctx context.Context, cl *kgo.Client, value []byte, n int, commit bool) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	var first atomic.Value
	wg.Add(n)
	for range n {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				first.CompareAndSwap(nil, err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		_ = cl.EndTransaction(ctx, kgo.TryAbort)
		return err
	}
	end := kgo.TryCommit
	if !commit {
		end = kgo.TryAbort
	}
	return cl.EndTransaction(ctx, end)
}

// consumeIsolated reads want records of topic from the start, with
// read_committed or read_uncommitted, and returns how long it took.
func consumeIsolated(ctx context.Context, addr, topic string, want int64, committed bool) (time.Duration, error) {
	level := kgo.ReadUncommitted()
	if committed {
		level = kgo.ReadCommitted()
	}
	parts := map[int32]kgo.Offset{}
	for p := range int32(txnPartitions) {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(level), kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(16<<20))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	start := time.Now()
	var n int64
	for n < want {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("read %d of %d records: %w", n, want, ctx.Err())
		}
		fetches := cl.PollFetches(ctx)
		var ferr error
		fetches.EachError(func(_ string, _ int32, err error) {
			if ctx.Err() == nil {
				ferr = err
			}
		})
		if ferr != nil {
			return 0, ferr
		}
		n += int64(fetches.NumRecords())
	}
	if n > want {
		return 0, fmt.Errorf("read %d records, want %d: aborted records reached a read_committed reader", n, want)
	}
	return time.Since(start), nil
}
