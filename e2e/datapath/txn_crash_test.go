package datapath

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// Crash safety of transactions, with a real broker process killed with
// SIGKILL (issue #18): a commit whose prepare record is durable is
// finished after the restart even if its markers were not all written;
// a transaction left open by a crash is aborted by the next producer of
// its transactional id, which fences the old one; and nothing of an
// aborted transaction is ever visible to read_committed.

// txnBrokerArgs start a broker that serves transactions, with few
// __transaction_state partitions (each is loaded after a restart).
var txnBrokerArgs = []string{"--samsa.transactions.enable", "true", "--transaction.state.log.num.partitions", "3"}

func txnProducer(t *testing.T, addr, id string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, addr, append([]kgo.Opt{kgo.TransactionalID(id), kgo.TransactionTimeout(60 * time.Second),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}, opts...)...)
}

// errBeforeEnd marks a transaction that failed before its end was asked
// for: it was never committed.
type errBeforeEnd struct{ error }

// writeTxn writes one transaction of n records per partition, values
// "<tag>/<partition>/<i>", and ends it (commit or abort). An error before
// the end is an errBeforeEnd.
func writeTxn(ctx context.Context, cl *kgo.Client, topic, tag string, partitions int32, n int, commit bool) error {
	if err := cl.BeginTransaction(); err != nil {
		return errBeforeEnd{err}
	}
	var recs []*kgo.Record
	for p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s/%d/%d", tag, p, i)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return errBeforeEnd{err}
	}
	return cl.EndTransaction(ctx, kgo.TransactionEndTry(commit))
}

// settledCommitted waits until no transaction holds the topic's last
// stable offset back (it equals the end offset on every partition), then
// reads everything read_committed shows.
func settledCommitted(t *testing.T, addr, topic string, partitions int32) map[string]int {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	ctx := deadline(t, 90*time.Second)
	var ends kadm.ListedOffsets
	for {
		var err1, err2 error
		var stable kadm.ListedOffsets
		ends, err1 = adm.ListEndOffsets(ctx, topic)
		stable, err2 = adm.ListCommittedOffsets(ctx, topic)
		same := err1 == nil && err2 == nil
		for p := range partitions {
			e, _ := ends.Lookup(topic, p)
			s, _ := stable.Lookup(topic, p)
			same = same && e.Err == nil && s.Err == nil && e.Offset == s.Offset
		}
		if same {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("a transaction still holds %s back: end offsets %v, last stable offsets %v (%v %v)", topic, ends, stable, err1, err2)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	seen := map[string]int{}
	// Read until nothing more comes for a while (the topic is small and
	// settled: every record below the end offsets is decided).
	idle := time.Now()
	for time.Since(idle) < 5*time.Second && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		got := 0
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			got++
		})
		if got > 0 {
			idle = time.Now()
		}
	}
	return seen
}

// TestTransactionCommitFinishedAfterCrash kills the broker right after
// EndTxn(commit) is answered, when the prepare record is durable and
// the markers are on their way: after the restart the coordinator finds
// the transaction prepared and writes its markers, and the commit is
// visible whole to read_committed. The kill lands in that window in at
// least one of the tries (the broker says so when it finishes a
// transaction a crash left prepared).
func TestTransactionCommitFinishedAfterCrash(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: txnBrokerArgs})
	requireDataPath(t, b.Addr())
	const partitions = 8
	topic := topicName(t, "txn")
	createTopic(t, b.Addr(), topic, partitions, nil)
	hits := 0
	tries := 5
	for try := range tries {
		cl := txnProducer(t, b.Addr(), "commit-crash")
		ctx := deadline(t, 60*time.Second)
		if err := writeTxn(ctx, cl, topic, fmt.Sprintf("c%d", try), partitions, 3, true); err != nil {
			t.Fatalf("try %d: %v", try, err)
		}
		b.Kill() // the commit is answered: the prepare record is durable
		cl.Close()
		mark := b.OutputMark()
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		seen := settledCommitted(t, b.Addr(), topic, partitions)
		for k := range try + 1 {
			for p := range partitions {
				for i := range 3 {
					if v := fmt.Sprintf("c%d/%d/%d", k, p, i); seen[v] != 1 {
						t.Fatalf("try %d: committed record %s visible %d times to read_committed", try, v, seen[v])
					}
				}
			}
		}
		if strings.Contains(b.OutputSince(mark), "finishing transactions left prepared") {
			hits++
		}
	}
	t.Logf("the kill fell between the prepare record and the last marker in %d of %d tries", hits, tries)
	if hits == 0 {
		t.Fatalf("no kill fell between the prepare record and the markers in %d tries; the case is not exercised", tries)
	}
}

// TestTransactionOpenAtCrashIsAborted kills the broker with a
// transaction open (its records written and acknowledged): after the
// restart a new producer with the same transactional id fences the old
// one and its transaction is aborted, never visible to read_committed;
// the old producer can no longer commit it.
func TestTransactionOpenAtCrashIsAborted(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: txnBrokerArgs})
	requireDataPath(t, b.Addr())
	const partitions = 3
	topic := topicName(t, "txn")
	createTopic(t, b.Addr(), topic, partitions, nil)
	ctx := deadline(t, 120*time.Second)
	old := txnProducer(t, b.Addr(), "open-crash", kgo.RetryTimeout(5*time.Second))
	if err := writeTxn(ctx, old, topic, "before", partitions, 2, true); err != nil {
		t.Fatal(err)
	}
	if err := old.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for p := range int32(partitions) {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "open/%d", p)})
	}
	if err := old.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b.Kill()
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	fresh := txnProducer(t, b.Addr(), "open-crash")
	if err := writeTxn(ctx, fresh, topic, "after", partitions, 2, true); err != nil {
		t.Fatalf("the new producer: %v", err)
	}
	if err := old.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the fenced producer committed its transaction")
	} else {
		t.Logf("the old producer's commit: %v", err)
	}
	seen := settledCommitted(t, b.Addr(), topic, partitions)
	for p := range int32(partitions) {
		if v := fmt.Sprintf("open/%d", p); seen[v] != 0 {
			t.Fatalf("%s of the transaction open at the crash is visible to read_committed", v)
		}
		for _, tag := range []string{"before", "after"} {
			for i := range 2 {
				if v := fmt.Sprintf("%s/%d/%d", tag, p, i); seen[v] != 1 {
					t.Fatalf("committed %s visible %d times", v, seen[v])
				}
			}
		}
	}
	d, err := kadm.NewClient(newClient(t, b.Addr())).DescribeTransactions(ctx, "open-crash")
	if err != nil {
		t.Fatal(err)
	}
	if tx := d["open-crash"]; tx.State != "CompleteCommit" || tx.ProducerEpoch < 1 {
		t.Fatalf("after the new producer's commit: %+v, want CompleteCommit at a bumped epoch", tx)
	}
}

// TestTransactionsUnderRepeatedKills runs a transactional producer that
// commits two transactions in three and aborts the third while the
// broker is killed at seeded random moments. A transaction the producer
// was told committed must be visible whole, exactly once; one it aborted
// (or that failed before its commit was asked) never; one whose commit
// got no answer either whole or not at all. SAMSA_CRASH_SEED replays.
func TestTransactionsUnderRepeatedKills(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: txnBrokerArgs})
	requireDataPath(t, b.Addr())
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SAMSA_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (replay with SAMSA_CRASH_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x7A))
	const partitions = 3
	const perTxn = 4
	topic := topicName(t, "txn")
	createTopic(t, b.Addr(), topic, partitions, nil)

	type outcome int
	const (
		committed outcome = iota
		aborted
		unknown
	)
	outcomes := map[int]outcome{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		cl := txnProducer(t, b.Addr(), "kills", kgo.RetryTimeout(10*time.Second))
		for k := 0; ; k++ {
			select {
			case <-stop:
				cl.Close()
				return
			default:
			}
			commit := k%3 != 2
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := writeTxn(ctx, cl, topic, fmt.Sprintf("k%d", k), partitions, perTxn, commit)
			cancel()
			var before errBeforeEnd
			switch {
			case err == nil && commit:
				outcomes[k] = committed
			case err == nil, !commit, errors.As(err, &before):
				outcomes[k] = aborted // never committed: a new producer of the id aborts it
			default:
				// The commit got no answer: the coordinator decided.
				outcomes[k] = unknown
			}
			if err != nil {
				// A new producer of the id aborts whatever was left open.
				cl.Close()
				cl = txnProducer(t, b.Addr(), "kills", kgo.RetryTimeout(10*time.Second))
			}
		}
	}()
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	for round := range rounds {
		time.Sleep(time.Duration(300+rng.IntN(2_000)) * time.Millisecond)
		b.Kill()
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		if err := b.Start(); err != nil {
			close(stop)
			t.Fatalf("round %d: restart: %v", round, err)
		}
	}
	time.Sleep(2 * time.Second)
	close(stop)
	<-done
	seen := settledCommitted(t, b.Addr(), topic, partitions)
	counts := map[outcome]int{}
	for k, o := range outcomes {
		counts[o]++
		visible := 0
		for p := range partitions {
			for i := range perTxn {
				visible += seen[fmt.Sprintf("k%d/%d/%d", k, p, i)]
			}
		}
		all := partitions * perTxn
		switch {
		case o == committed && visible != all:
			t.Errorf("transaction %d was committed but %d of its %d records are visible", k, visible, all)
		case o == aborted && visible != 0:
			t.Errorf("transaction %d was aborted but %d of its records are visible", k, visible)
		case o == unknown && visible != 0 && visible != all:
			t.Errorf("transaction %d (no answer to its end) is partly visible: %d of %d records", k, visible, all)
		}
	}
	for v, n := range seen {
		if n != 1 {
			t.Errorf("%s visible %d times", v, n)
		}
	}
	t.Logf("transactions: %d committed, %d aborted, %d ended by a kill", counts[committed], counts[aborted], counts[unknown])
	if counts[committed] == 0 || counts[aborted] == 0 {
		t.Fatal("the run committed or aborted nothing; the producer could not work between the kills")
	}
}
