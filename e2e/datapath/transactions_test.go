package datapath

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// With samsa.transactions.enable=false a transactional producer fails
// at once with a clear, fatal error instead of waiting for a coordinator
// for ever: the broker answers FindCoordinator for a transactional id
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (fatal in franz-go, Java and
// librdkafka) with a message, does not advertise the transaction APIs,
// and logs the refusal once per client. (On, the default, the other
// tests of this file and transactions_*_test.go.)
func TestTransactionsOff(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: []string{"--samsa.transactions.enable", "false"}})
	b.LogOnFailure(t)
	requireDataPath(t, b.Addr())
	topic := topicName(t, "txn")
	createTopic(t, b.Addr(), topic, 1, nil)
	mark := b.OutputMark()

	served := apiVersions(t, b.Addr())
	for _, k := range []int16{24, 25, 26, 28} { // AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit
		if _, ok := served[k]; ok {
			t.Errorf("%s is advertised with transactions off", kmsg.NameForKey(k))
		}
	}

	// The raw answer (kgo picks the version; every version is checked in
	// actors/api).
	cl := newClient(t, b.Addr())
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = 1, "raw-txn", []string{"raw-txn"}
	resp, err := req.RequestWith(deadline(t, 10*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	code, msg := resp.ErrorCode, resp.ErrorMessage
	if len(resp.Coordinators) == 1 {
		code, msg = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].ErrorMessage
	}
	if code != kerr.TransactionalIDAuthorizationFailed.Code || msg == nil || !strings.Contains(*msg, "samsa.transactions.enable=false") {
		t.Fatalf("FindCoordinator for a transactional id: code %d, message %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED saying why", code, msg)
	}

	// A transactional batch sent anyway is refused, and not appended.
	txnBatch := batchtest.Plain(1, time.Now().UnixMilli(), batchtest.Producer(1, 0, 0), batchtest.Attributes(wire.AttrTransactional))
	preq := kmsg.NewPtrProduceRequest()
	preq.Version, preq.Acks, preq.TimeoutMillis = 9, 1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = 0, txnBatch
	rt.Partitions = append(rt.Partitions, rp)
	preq.Topics = append(preq.Topics, rt)
	presp, err := preq.RequestWith(deadline(t, 10*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	if pr := presp.Topics[0].Partitions[0]; pr.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("a transactional batch with transactions off: %+v, want INVALID_REQUEST", pr)
	}

	// A real transactional producer: generous client timeouts, so only
	// a fatal answer makes it fail within the few seconds allowed.
	clientID := fmt.Sprintf("samsa-e2e-txn-client-%d", time.Now().UnixNano())
	tcl := newClient(t, b.Addr(), kgo.TransactionalID("samsa-e2e-txn"), kgo.DefaultProduceTopic(topic),
		kgo.ClientID(clientID), kgo.RetryTimeout(time.Minute), kgo.RecordDeliveryTimeout(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	err = tcl.BeginTransaction()
	if err == nil {
		err = tcl.ProduceSync(ctx, kgo.StringRecord("in a transaction")).FirstErr()
	}
	took := time.Since(began)
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Fatalf("transactional produce after %v: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", took, err)
	}
	if took > 5*time.Second {
		t.Errorf("the transactional producer took %v to fail, want a few seconds at most", took)
	}
	t.Logf("kgo transactional producer failed after %v: %v", took, err)

	// The broker logs the refusal as it answers; the line may reach the
	// test's copy of its output a moment after the client has failed.
	out, err := b.WaitOutput(ctx, mark, "client_id="+clientID)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "client_id="+clientID+" "); n != 1 {
		t.Errorf("the refusal of %s is logged %d times, want once:\n%s", clientID, n, out)
	}

	// The Java producer: initTransactions fails with
	// TransactionalIdAuthorizationException within seconds (Java shows the
	// code's own text, not the broker's message).
	cp := javaClasspath(t)
	jctx, jcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer jcancel()
	began = time.Now()
	jout, err := exec.CommandContext(jctx, "java", "-cp", cp, "testdata/TxnProbe.java", b.Addr(), "samsa-e2e-java-txn").CombinedOutput()
	took = time.Since(began)
	last := testkit.LastLines(string(jout), 1)
	if err != nil || !strings.Contains(last, "FAILED org.apache.kafka.common.errors.TransactionalIdAuthorizationException") {
		t.Fatalf("java TxnProbe after %v: %v\n%s", took, err, testkit.LastLines(string(jout), 30))
	}
	// The JVM's start and the source compile take a few seconds of it.
	if took > 20*time.Second {
		t.Errorf("the Java transactional producer took %v to fail", took)
	}
	t.Logf("java: %s (%v)", strings.TrimSpace(last), took.Round(time.Millisecond))
}

// Java's transactional KafkaProducer, commit and abort (every third
// transaction aborted after its records were flushed to the log), with
// offsets sent in each transaction: a read_committed KafkaConsumer reads
// exactly the committed records in order, a read_uncommitted one every
// record, and the group's offset is the last committed transaction's
// (interop/java Txn.java checks all of it).
func TestJavaTransactions(t *testing.T) {
	cp := javaClasspath(t)
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	topic := topicName(t, "jtxn")
	createTopic(t, b.Addr(), topic, 3, nil)
	out := runJava(t, cp, "txn", b.Addr(), topic, "30", "10", topic+"-group")
	if out != "OK committed=200 aborted=100 offset=29" {
		t.Errorf("java txn: %q, want 200 committed and 100 aborted records, offset 29", out)
	}
}

// franz-go's transactional producer against the broker process: committed
// and aborted transactions interleaved over three partitions; a
// read_committed consumer gets exactly the committed records, a
// read_uncommitted one all of them. (The coordinator's own tests, with
// fencing, restarts and GroupTransactSession, are in actors/txn.)
func TestKgoTransactions(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	topic := topicName(t, "ktxn")
	createTopic(t, b.Addr(), topic, 3, nil)
	ctx := deadline(t, 2*time.Minute)
	p := newClient(t, b.Addr(), kgo.TransactionalID(topic), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	const txns, perTxn = 20, 50
	committed := map[string]bool{}
	for tx := range txns {
		abort := tx%4 == 1
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var rs []*kgo.Record
		for i := range perTxn {
			v := fmt.Sprintf("t%d-%d", tx, i)
			rs = append(rs, kgo.StringRecord(v))
			if !abort {
				committed[v] = true
			}
		}
		// Produced and acknowledged before the end: aborted records are
		// in the log.
		if err := p.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("transaction %d: %v", tx, err)
		}
		if err := p.EndTransaction(ctx, kgo.TransactionEndTry(!abort)); err != nil {
			t.Fatalf("ending transaction %d (commit %v): %v", tx, !abort, err)
		}
	}
	read := func(level kgo.IsolationLevel, want int) map[string]int {
		c := newClient(t, b.Addr(), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(level),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		got := map[string]int{}
		n := 0
		for n < want {
			fs := c.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatalf("%d of %d records read: %v", n, want, err)
			}
			fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", tp, p, err) })
			fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)]++; n++ })
		}
		return got
	}
	got := read(kgo.ReadCommitted(), len(committed))
	for v, n := range got {
		if !committed[v] || n != 1 {
			t.Errorf("read_committed: %s read %d times (committed: %v)", v, n, committed[v])
		}
	}
	if all := read(kgo.ReadUncommitted(), txns*perTxn); len(all) != txns*perTxn {
		t.Errorf("read_uncommitted: %d distinct records, want %d", len(all), txns*perTxn)
	}
}
