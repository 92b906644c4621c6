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
)

// Until transactions land, a transactional producer fails at once with a
// clear, fatal error instead of waiting for a coordinator for ever: the
// broker answers FindCoordinator for a transactional id
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (fatal in franz-go, Java and
// librdkafka) with a message, and logs the refusal once per client.
func TestTransactionalProducerFailsFast(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	topic := topicName(t, "txn")
	createTopic(t, b.Addr(), topic, 1, nil)
	mark := b.OutputMark()

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
	if code != kerr.TransactionalIDAuthorizationFailed.Code || msg == nil || !strings.Contains(*msg, "not supported") {
		t.Fatalf("FindCoordinator for a transactional id: code %d, message %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED saying why", code, msg)
	}

	// A real transactional producer: generous client timeouts, so only
	// a fatal answer makes it fail within the few seconds allowed.
	// The broker logs a refusal once per client of its life, and the
	// broker is shared: a client id of this run's own.
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
}

// The Java producer: initTransactions fails with
// TransactionalIdAuthorizationException within seconds (Java shows the
// code's own text, not the broker's message).
func TestJavaTransactionalProducerFailsFast(t *testing.T) {
	cp := javaClasspath(t)
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	out, err := exec.CommandContext(ctx, "java", "-cp", cp, "testdata/TxnProbe.java", b.Addr(), "samsa-e2e-java-txn").CombinedOutput()
	took := time.Since(began)
	last := testkit.LastLines(string(out), 1)
	if err != nil || !strings.Contains(last, "FAILED org.apache.kafka.common.errors.TransactionalIdAuthorizationException") {
		t.Fatalf("java TxnProbe after %v: %v\n%s", took, err, testkit.LastLines(string(out), 30))
	}
	// The JVM's start and the source compile take a few seconds of it.
	if took > 20*time.Second {
		t.Errorf("the Java transactional producer took %v to fail", took)
	}
	t.Logf("java: %s (%v)", strings.TrimSpace(last), took.Round(time.Millisecond))
}
