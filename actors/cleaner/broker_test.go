package cleaner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// latestWrite is what the producer was told about a key's last record.
type latestWrite struct {
	offset int64
	value  string // "" for a tombstone
}

// produceRounds produces rounds of keys k-0..k-(keys-1) (values naming
// the round) and returns each key's latest write.
func produceRounds(t *testing.T, cl *kgo.Client, topic string, rounds, keys int, latest map[string]latestWrite) {
	t.Helper()
	ctx := context.Background()
	for r := range rounds {
		recs := make([]*kgo.Record, 0, keys)
		for k := range keys {
			recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k-%d", k), Value: fmt.Appendf(nil, "round-%d-key-%d", r, k)})
		}
		res := cl.ProduceSync(ctx, recs...)
		if err := res.FirstErr(); err != nil {
			t.Fatal(err)
		}
		for _, pr := range res {
			latest[string(pr.Record.Key)] = latestWrite{pr.Record.Offset, string(pr.Record.Value)}
		}
	}
}

// consumeAll reads the partition from its start to offset end.
func consumeAll(t *testing.T, addr, topic string, end int64) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("fetch: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
		if n := len(out); n > 0 && out[n-1].Offset >= end-1 {
			return out
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.After(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

// TestCompactedTopicShrinks is the first done-when check, with a
// franz-go consumer: 40 rounds of 1,000 keys and tombstones for 100 of
// them shrink, within the backoff plus a run, to about the key count,
// each live key's latest value at its original offset.
func TestCompactedTopicShrinks(t *testing.T) {
	b := testkit.StartInProcess(t, "log.cleaner.backoff.ms", "200")
	// Uncompressed, so the filler below fills segments at a known rate.
	adm, cl := b.Admin(t, kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx := context.Background()
	const topic = "compacted"
	res, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("65536"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.1"),
	}, topic)
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	latest := map[string]latestWrite{}
	produceRounds(t, cl, topic, 40, 1000, latest)
	var tomb []*kgo.Record
	for k := range 100 {
		tomb = append(tomb, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k-%d", k*10)})
	}
	pr := cl.ProduceSync(ctx, tomb...)
	if err := pr.FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, r := range pr {
		latest[string(r.Record.Key)] = latestWrite{r.Record.Offset, ""}
	}
	// The tail is cleanable once its segment rolls: records of one more
	// key fill the active segment until it does (segment.bytes).
	var flush kgo.ProduceResults
	for i := range 80 {
		v := fmt.Sprintf("%d-%s", i, strings.Repeat("x", 1024))
		flush = cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("flush"), Value: []byte(v)})
		if err := flush.FirstErr(); err != nil {
			t.Fatal(err)
		}
		latest["flush"] = latestWrite{flush[0].Record.Offset, v}
	}
	end := flush[0].Record.Offset + 1
	dir := filepath.Join(b.Dir, topic+"-0")
	waitFor(t, "the cleaner to clean up to the flush record", 60*time.Second, func() bool {
		return testkit.CleanerCheckpoint(b.Dir, topic, 0) > latest["k-999"].offset
	})
	t.Logf("log of %d bytes after cleaning", dirBytes(t, dir))
	cleaned := testkit.CleanerCheckpoint(b.Dir, topic, 0)
	checkCompacted(t, consumeAll(t, b.Addr, topic, end), latest, cleaned, "after cleaning")
	// The idempotent producer goes on where it was: cleaning kept its
	// batch headers, and its state.
	pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
	defer pcancel()
	more := cl.ProduceSync(pctx, &kgo.Record{Topic: topic, Key: []byte("k-1"), Value: []byte("after")})
	if err := more.FirstErr(); err != nil {
		t.Fatalf("the idempotent producer after cleaning: %v", err)
	}
	latest["k-1"] = latestWrite{more[0].Record.Offset, "after"}
	// The same after a restart (the cleaned segments are the log now).
	b.Restart()
	checkCompacted(t, consumeAll(t, b.Addr, topic, more[0].Record.Offset+1), latest, cleaned, "after a restart")
}

// TestCleanerDisabled: log.cleaner.enable=false leaves compacted logs as
// written.
func TestCleanerDisabled(t *testing.T) {
	b := testkit.StartInProcess(t, "log.cleaner.enable", "false")
	if b.Broker.Cleaner() != nil {
		t.Fatal("a cleaner runs with log.cleaner.enable=false")
	}
}

// TestReadersWhileCleaning: consumers reading the log over and over while
// it is produced to and cleaned never get an error, and every record they
// get is the one produced at its offset, in offset order.
func TestReadersWhileCleaning(t *testing.T) {
	b := testkit.StartInProcess(t, "log.cleaner.backoff.ms", "50")
	adm, cl := b.Admin(t)
	ctx := context.Background()
	const topic = "busy"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("16384"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	}, topic); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	produced := map[int64]string{}
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			errs <- readLoop(b.Addr, topic, stop, func(o int64, v string) error {
				mu.Lock()
				want, ok := produced[o]
				mu.Unlock()
				if ok && want != v {
					return fmt.Errorf("offset %d holds %q, produced %q", o, v, want)
				}
				return nil
			})
		}()
	}
	for r := range 30 {
		recs := make([]*kgo.Record, 0, 200)
		for k := range 200 {
			recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k-%d", k), Value: fmt.Appendf(nil, "r%d-k%d", r, k)})
		}
		res := cl.ProduceSync(ctx, recs...)
		if err := res.FirstErr(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		for _, pr := range res {
			produced[pr.Record.Offset] = string(pr.Record.Value)
		}
		mu.Unlock()
	}
	waitFor(t, "a few cleanings", 60*time.Second, func() bool { return testkit.CleanerCheckpoint(b.Dir, topic, 0) > 3000 })
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readLoop reads the partition from its start to its end over and over
// until stop, checking offsets increase within a pass and each record
// with check.
func readLoop(addr, topic string, stop <-chan struct{}, check func(int64, string) error) error {
	for passes := 0; ; passes++ {
		select {
		case <-stop:
			if passes == 0 {
				return errors.New("no read pass finished")
			}
			return nil
		default:
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
		if err != nil {
			return err
		}
		prev := int64(-1)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				break
			}
			if err := fs.Err(); err != nil {
				cancel()
				cl.Close()
				return fmt.Errorf("fetch while cleaning: %w", err)
			}
			var ferr error
			fs.EachRecord(func(r *kgo.Record) {
				if r.Offset <= prev && ferr == nil {
					ferr = fmt.Errorf("offset %d after %d", r.Offset, prev)
				}
				prev = r.Offset
				if err := check(r.Offset, string(r.Value)); err != nil && ferr == nil {
					ferr = err
				}
			})
			if ferr != nil {
				cancel()
				cl.Close()
				return ferr
			}
		}
		cancel()
		cl.Close()
	}
}

// checkCompacted checks that recs hold each key once, its latest write at
// its original offset, in offset order; a key written again at or after
// dirtyFrom (not cleaned yet) may also have older records.
func checkCompacted(t *testing.T, recs []*kgo.Record, latest map[string]latestWrite, dirtyFrom int64, what string) {
	t.Helper()
	seen := map[string]bool{}
	prev := int64(-1)
	for _, r := range recs {
		k := string(r.Key)
		if r.Offset <= prev {
			t.Fatalf("%s: offset %d after %d", what, r.Offset, prev)
		}
		prev = r.Offset
		if w, ok := latest[k]; ok && r.Offset < w.offset && w.offset >= dirtyFrom {
			continue // a key written again past what was cleaned (the filler in the active segment)
		}
		want, ok := latest[k]
		if !ok || seen[k] || r.Offset != want.offset || string(r.Value) != want.value || (want.value == "") != (r.Value == nil) {
			t.Fatalf("%s: record %q=%q at %d; the key's latest write is %q at %d (seen before: %v)", what, k, r.Value, r.Offset, want.value, want.offset, seen[k])
		}
		seen[k] = true
	}
	for k, w := range latest {
		if !seen[k] && w.value != "" {
			t.Fatalf("%s: live key %q (latest at %d) missing", what, k, w.offset)
		}
	}
	if len(recs) > len(latest)+100 {
		t.Fatalf("%s: %d records for %d keys: too many left (more than 100 past the keys)", what, len(recs), len(latest))
	}
	t.Logf("%s: %d records for %d keys", what, len(recs), len(latest))
}

func dirBytes(t *testing.T, dir string) int64 {
	var n int64
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range names {
		if strings.HasSuffix(e.Name(), ".log") {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

// TestConsumerOffsetsCompacted is the second done-when check:
// 20,000 offset commits of one group leave __consumer_offsets a few
// segments long, and the group's offsets load back the same from the
// compacted log.
func TestConsumerOffsetsCompacted(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 commits")
	}
	b := testkit.StartInProcess(t, "log.cleaner.backoff.ms", "200", "offsets.topic.num.partitions", "1",
		"offsets.topic.segment.bytes", "16384")
	adm, _ := b.Admin(t)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "data"); err != nil {
		t.Fatal(err)
	}
	const group = "g"
	commit := func(i int) (kadm.Offsets, error) {
		offs := kadm.Offsets{}
		for p := int32(0); p < 4; p++ {
			offs.Add(kadm.Offset{Topic: "data", Partition: p, At: int64(i), LeaderEpoch: -1})
		}
		r, err := adm.CommitOffsets(ctx, group, offs)
		if err == nil {
			err = r.Error()
		}
		return offs, err
	}
	// 20,000 commits from 8 goroutines (one group: the coordinator
	// serialises them), then one more whose offsets are the ones to find.
	const writers, total = 8, 20000
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := w; i < total; i += writers {
				if _, err := commit(i); err != nil {
					errs <- fmt.Errorf("commit %d: %w", i, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	last, err := commit(total)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(b.Dir, "__consumer_offsets-0")
	segments := func() int {
		names, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range names {
			if strings.HasSuffix(e.Name(), ".log") {
				n++
			}
		}
		return n
	}
	// Uncompacted the commits fill about 300 segments of 16 KiB. How
	// many small segments are left depends on how many cleanings ran while
	// the commits came in (each leaves the groups it rewrote as a segment
	// or two, and a clean section is not rewritten again until it has
	// dirt, as in Kafka): 7 to 12 were seen as the broker got faster, so
	// the check is a tenth of the uncompacted count, and at most one
	// segment's worth of bytes in all.
	waitFor(t, "__consumer_offsets to be compacted", 120*time.Second, func() bool {
		return segments() <= 30 && dirBytes(t, dir) <= 16384
	})
	t.Logf("__consumer_offsets: %d segments, %d bytes of log", segments(), dirBytes(t, dir))
	b.Restart()
	adm2, _ := b.Admin(t)
	got, err := adm2.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 4; p++ {
		g, ok := got.Lookup("data", p)
		w, _ := last.Lookup("data", p)
		if !ok || g.At != w.At {
			t.Fatalf("partition %d: offset %d after the reload from the compacted log, committed %d", p, g.At, w.At)
		}
	}
}

// TestCleanerTransactions: on a compacted topic, the records of aborted
// transactions are gone after cleaning (read_uncommitted no longer sees
// them either), committed ones are compacted like any, and a
// read_committed consumer reads each key's latest committed value.
func TestCleanerTransactions(t *testing.T) {
	b := testkit.StartInProcess(t, "log.cleaner.backoff.ms", "100", "samsa.transactions.enable", "true",
		"transaction.state.log.num.partitions", "1", "transaction.state.log.segment.bytes", "2048")
	adm, _ := b.Admin(t)
	ctx := context.Background()
	const topic = "txn-compacted"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("8192"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	}, topic); err != nil {
		t.Fatal(err)
	}
	tx, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.TransactionalID("cleaner-test"), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	committed := map[string]latestWrite{}
	aborted := map[int64]bool{}
	for round := range 30 {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for k := range 20 {
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "k-%d", k), Value: fmt.Appendf(nil, "txn-%d-k-%d", round, k)})
		}
		res := tx.ProduceSync(ctx, recs...)
		if err := res.FirstErr(); err != nil {
			t.Fatal(err)
		}
		commit := round%3 != 2
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if commit {
				committed[string(r.Record.Key)] = latestWrite{r.Record.Offset, string(r.Record.Value)}
			} else {
				aborted[r.Record.Offset] = true
			}
		}
	}
	// A plain record of its own key rolls the last transaction's segment.
	plain, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	var last int64
	for i := range 20 {
		v := fmt.Sprintf("%d-%s", i, strings.Repeat("y", 600))
		r := plain.ProduceSync(ctx, &kgo.Record{Key: []byte("roll"), Value: []byte(v)})
		if err := r.FirstErr(); err != nil {
			t.Fatal(err)
		}
		committed["roll"] = latestWrite{r[0].Record.Offset, v}
		last = r[0].Record.Offset
	}
	lastTxn := committed["k-19"].offset
	if lso, err := adm.ListCommittedOffsets(ctx, topic); err == nil {
		leo, _ := adm.ListEndOffsets(ctx, topic)
		lo, _ := lso.Lookup(topic, 0)
		he, _ := leo.Lookup(topic, 0)
		t.Logf("last stable offset %d, high watermark %d", lo.Offset, he.Offset)
	}
	waitFor(t, "the cleaner to pass the transactions", 60*time.Second, func() bool {
		return testkit.CleanerCheckpoint(b.Dir, topic, 0) > lastTxn
	})
	dirty := testkit.CleanerCheckpoint(b.Dir, topic, 0)
	for _, mode := range []struct {
		name string
		iso  kgo.IsolationLevel
	}{{"read_committed", kgo.ReadCommitted()}, {"read_uncommitted", kgo.ReadUncommitted()}} {
		iso := mode.iso
		c, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.FetchIsolationLevel(iso),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
		if err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		for len(recs) == 0 || recs[len(recs)-1].Offset < last {
			fs := c.PollFetches(fctx)
			if err := fs.Err(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				if aborted[r.Offset] {
					t.Fatalf("%s: a record of an aborted transaction (offset %d) after cleaning", mode.name, r.Offset)
				}
				recs = append(recs, r)
			})
		}
		cancel()
		c.Close()
		checkCompacted(t, recs, committed, dirty, mode.name)
	}
	// __transaction_state is compacted too, and the coordinator reloads
	// the transactional id from it: after a restart the same id starts
	// and commits a new transaction.
	waitFor(t, "__transaction_state to be cleaned", 60*time.Second, func() bool {
		return testkit.CleanerCheckpoint(b.Dir, "__transaction_state", 0) > 0
	})
	tx.Close()
	b.Restart()
	tx2, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.TransactionalID("cleaner-test"), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Close()
	if err := tx2.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx2.ProduceSync(ctx, &kgo.Record{Key: []byte("k-0"), Value: []byte("after restart")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := tx2.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("committing with the transactional id reloaded from a compacted __transaction_state: %v", err)
	}
}
