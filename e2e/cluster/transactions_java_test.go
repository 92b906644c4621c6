package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// interopJava is the built Java interop harness (`make interop` builds
// it before `make cluster-test` in CI; this package never builds it, see
// kafka4Tools).
const interopJava = "../../interop/java"

// Java's transactional producer on the cluster: 30 transactions over
// three partitions of replication factor 3 (so some leaders are not the
// coordinator's broker and get their markers by WriteTxnMarkers), each
// with the group's offset sent in it, every third aborted; the
// read_committed consumer must read exactly the committed records and the
// group's offset must be the last committed one (interop/java Txn.java).
// Markers once shared the coordinator broker's replication connection:
// the leader answers WriteTxnMarkers only once its followers have the
// marker, and the follower's Fetch answer queued behind it on that
// connection, so each such transaction waited for the 30 s request
// timeout and the producer timed out.
func TestJavaTransactionsAcrossBrokers(t *testing.T) {
	testkit.RequireTool(t, "java")
	dir, err := filepath.Abs(interopJava)
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(filepath.Join(dir, "target", "classes", "io", "samsa", "interop", "Txn.class"))
	testkit.Require(t, err == nil, "interop/java is not built (make interop builds it)")
	// A cluster of its own: __consumer_offsets is made by the first
	// transaction's AddOffsetsToTxn, as on a new cluster.
	c := ownCluster(t)
	topic := name(t, "txn")
	createTopic(t, c, topic, 3, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := filepath.Join(dir, "target", "classes") + ":" + filepath.Join(dir, "target", "lib", "*")
	began := time.Now()
	out, err := exec.CommandContext(ctx, "java", "-cp", cp, "io.samsa.interop.Main", "txn", c.Bootstrap(), topic, "30", "10", topic+"-group").CombinedOutput()
	took := time.Since(began)
	last := strings.TrimSpace(testkit.LastLines(string(out), 1))
	if err != nil || last != "OK committed=200 aborted=100 offset=29" {
		t.Fatalf("java txn after %v: %v\n%s", took, err, testkit.LastLines(string(out), 30))
	}
	// 30 transactions take seconds; a marker stuck for a request timeout
	// takes 30 s each.
	if took > time.Minute {
		t.Errorf("30 transactions took %v", took)
	}
	t.Logf("java: %s (%v)", last, took.Round(time.Millisecond))
}
