package mixed

import (
	"fmt"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/testkit"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// protocolTroubles are what a Kafka broker logs, at any level, when a
// peer's request or answer does not parse or makes no sense to it.
var protocolTroubles = []string{"SchemaException", "UnsupportedVersionException", "InvalidRequestException",
	"CorruptRecordException", "InvalidRecordException", "UnknownServerException", "Error parsing",
	"BufferUnderflowException", "IllegalStateException", "IllegalArgumentException", "NullPointerException",
	"InconsistentTopicIdException", "UnknownTopicIdException", "NotControllerException"}

// explainedErrors are ERROR lines Kafka 3.9.1 logs in a cluster of its
// own too, after the events these tests cause:
//   - a controller that lost its ZooKeeper link (moveControllerTo) still
//     sends what it had queued; the broker refuses the old epoch;
//   - a new controller first takes a dead leader out of the ISR and
//     sends LeaderAndIsr with leader -1 (NoLeader), then elects one
//     (ZkReplicaStateMachine's OfflineReplica before the
//     PartitionStateMachine's election), which the followers log;
//   - a Kafka controller stopped with SIGTERM interrupts its request
//     send threads, and one paused in its retry backoff logs "fails to
//     send a request" with the InterruptedException (seen in CI as broker
//     3, the controller, was replaced by samsa).
var explainedErrors = []string{"ControllerMovedException", "from an old controller",
	"cannot become follower since the new leader -1 is unavailable"}

// checkKafkaLogs fails t for every line a Kafka broker logged that names
// a protocol problem, and for every ERROR line not explained above:
// Kafka's word on what samsa sent and answered. A samsa broker's ERROR
// lines fail t too (checkSamsaLog).
func checkKafkaLogs(t *testing.T, c *testkit.Cluster) {
	t.Helper()
	// Every broker, whatever it runs as now: a broker's output holds all
	// its runs, of either kind (SetKind).
	for _, b := range c.Brokers() {
		checkSamsaLog(t, b)
		bad := 0
		for _, entry := range logEntries(b.Output()) {
			if kafkaTrouble(entry) {
				bad++
				if bad <= 20 {
					t.Errorf("broker %d: %s", b.ID(), entry)
				}
			}
		}
		if bad > 20 {
			t.Errorf("broker %d: %d more such lines", b.ID(), bad-20)
		}
	}
}

// checkSamsaLog fails t for each ERROR a samsa broker logged (a
// partition it could not open, a request it could not serve): in these
// tests nothing should go that wrong on either side.
func checkSamsaLog(t *testing.T, b *testkit.ClusterBroker) {
	t.Helper()
	for _, line := range strings.Split(b.Output(), "\n") {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("samsa broker %d: %s", b.ID(), line)
		}
	}
}

// logEntries splits log4j output into entries: a line starting with
// "[date]" and the lines after it that do not (an exception's message and
// stack trace); samsa's lines ("time=...") are entries of their own.
func logEntries(out string) []string {
	var entries []string
	for _, line := range strings.Split(out, "\n") {
		if len(entries) > 0 && !strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "time=") {
			entries[len(entries)-1] += "\n" + line
			continue
		}
		entries = append(entries, line)
	}
	return entries
}

func kafkaTrouble(line string) bool {
	for _, s := range protocolTroubles {
		if strings.Contains(line, s) {
			return true
		}
	}
	if !strings.Contains(line, "] ERROR ") {
		return false
	}
	for _, s := range explainedErrors {
		if strings.Contains(line, s) {
			return false
		}
	}
	if strings.Contains(line, "fails to send a request") && strings.Contains(line, "java.lang.InterruptedException") {
		return false // its own shutdown, above
	}
	return true
}
