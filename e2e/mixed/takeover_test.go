package mixed

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// takeover runs one broker as first, which writes the dataset; stops it
// (SIGTERM: a clean shutdown) and starts it as second on the same
// server.properties and log.dirs, which must serve everything and write
// more; then hands the directory back to first, which must serve both
// rounds.
func takeover(t *testing.T, first, second testkit.ClusterKind) {
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: first, Brokers: 1, SessionTimeout: sessionTimeout,
		Properties: map[string]string{
			"offsets.topic.num.partitions":         "3",
			"transaction.state.log.num.partitions": "3",
			"log.cleaner.backoff.ms":               "200",
			"log.cleaner.dedupe.buffer.size":       "16777216",
		}})
	keepLogs(t, c)
	b := c.Broker(0)
	ctx := deadline(t, 4*time.Minute)
	createTopics(t, ctx, admin(t, c))
	var d dataset
	d.write(t, ctx, c)
	deleteRecords(t, ctx, c)
	d.commitGroup(t, ctx, c)
	waitCleaned(t, b)
	d.verify(t, ctx, c, first.String())

	handOver := func(to testkit.ClusterKind) {
		t.Helper()
		from := b.Kind()
		if err := b.Stop(); err != nil {
			t.Fatal(err)
		}
		checkDirectory(t, b.DataDir(), from)
		if err := b.SetKind(to); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s took over %s's directory; ready in %v", to, from, time.Since(began).Round(time.Millisecond))
	}
	handOver(second)
	d.verify(t, ctx, c, second.String()+" on "+first.String()+"'s files")
	d.write(t, ctx, c)
	d.commitGroup(t, ctx, c)
	d.verify(t, ctx, c, second.String())

	handOver(first)
	d.verify(t, ctx, c, first.String()+" on "+second.String()+"'s files")
	checkKafkaLogs(t, c)
	checkKafkaRecovery(t, c)
}

// TestTakeoverOfKafkaDirectory: Kafka 3.9.1 writes, samsa takes over in
// place and writes, Kafka takes its directory back.
func TestTakeoverOfKafkaDirectory(t *testing.T) { takeover(t, testkit.Kafka39, testkit.Samsa) }

// TestTakeoverBySamsaReversed: samsa writes, Kafka 3.9.1 opens samsa's
// directory and writes, samsa takes it back.
func TestTakeoverOfSamsaDirectory(t *testing.T) { takeover(t, testkit.Samsa, testkit.Kafka39) }

// waitCleaned waits until the cleaner has cleaned compact-0 and recorded
// it in cleaner-offset-checkpoint.
func waitCleaned(t *testing.T, b *testkit.ClusterBroker) {
	t.Helper()
	path := filepath.Join(b.DataDir(), "cleaner-offset-checkpoint")
	eventually(t, time.Minute, "the cleaner's checkpoint of "+compactTopic, func() error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == compactTopic && f[1] == "0" && f[2] != "0" {
				return nil
			}
		}
		return errorf("%s: %q", path, data)
	})
}

// checkDirectory checks that a stopped broker of kind left the files of
// Kafka's layout that the takeover reads: each is then read by the other
// kind, which the verify that follows proves.
func checkDirectory(t *testing.T, dir string, kind testkit.ClusterKind) {
	t.Helper()
	nonEmpty := func(pattern string) {
		t.Helper()
		names, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, n := range names {
			if st, err := os.Stat(n); err == nil && st.Size() > 0 {
				return
			}
		}
		t.Errorf("%s left no non-empty %s in %s", kind, pattern, dir)
	}
	for _, f := range []string{"meta.properties", "recovery-point-offset-checkpoint", "replication-offset-checkpoint",
		"log-start-offset-checkpoint", "cleaner-offset-checkpoint", ".kafka_cleanshutdown",
		"plain-0/leader-epoch-checkpoint", "plain-0/*.index", "plain-0/*.timeindex", "plain-1/*.snapshot",
		"txn-0/*.txnindex", "compact-0/*.log"} {
		if f == ".kafka_cleanshutdown" {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s left no %s after a clean stop: %v", kind, f, err)
			}
			continue
		}
		nonEmpty(f)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "plain-0", "*.log"))
	if len(segs) < 3 {
		t.Errorf("%s: plain-0 has %d segments; the test wants several", kind, len(segs))
	}
	data, err := os.ReadFile(filepath.Join(dir, "log-start-offset-checkpoint"))
	if err != nil || !bytes.Contains(data, []byte("plain 0 200\n")) {
		t.Errorf("%s: log-start-offset-checkpoint %q (%v), want plain 0 200", kind, data, err)
	}
}

// kafkaRecoveryTroubles are what Kafka logs when it cannot use a file as
// it finds it: an index it rebuilds, a segment it recovers although the
// last stop was clean, a checkpoint it ignores.
var kafkaRecoveryTroubles = []string{"corrupted index", "rebuilding index", "Found invalid", "Recovering unflushed segment",
	"Error reading", "Error while", "is corrupt", "Deleting invalid", "truncat", "Failed to load producer snapshot"}

// checkKafkaRecovery fails t for each such line of a Kafka broker.
func checkKafkaRecovery(t *testing.T, c *testkit.Cluster) {
	t.Helper()
	for _, b := range c.Brokers() {
		for _, entry := range logEntries(b.Output()) {
			if !strings.HasPrefix(entry, "[") {
				continue // samsa's lines
			}
			for _, s := range kafkaRecoveryTroubles {
				if strings.Contains(entry, s) {
					t.Errorf("broker %d (Kafka) on opening a directory: %s", b.ID(), entry)
					break
				}
			}
		}
	}
}

// TestTakeoverRefusesOldFormat: a Kafka directory with a partition whose
// segment is in Kafka's message format v1 (magic 1; made here by
// rewriting the magic byte of a segment Kafka wrote, since Kafka 3.9
// writes v2 only) is taken over by samsa, which must refuse that
// partition clearly (an error naming the segment), leave its files as
// they were, and serve the other partitions.
func TestTakeoverRefusesOldFormat(t *testing.T) {
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Kafka39, Brokers: 1, SessionTimeout: sessionTimeout})
	keepLogs(t, c)
	b := c.Broker(0)
	ctx := deadline(t, 2*time.Minute)
	resp, err := admin(t, c).CreateTopic(ctx, 2, 1, nil, plainTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	want := [2][]string{numbered("p0", 20), numbered("p1", 20)}
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p, vals := range want {
		for _, v := range vals {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: plainTopic, Partition: int32(p), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cl.Close()
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	segment := filepath.Join(b.DataDir(), plainTopic+"-0", "00000000000000000000.log")
	data, err := os.ReadFile(segment)
	if err != nil {
		t.Fatal(err)
	}
	data[16] = 1 // the magic byte, at the same place in v0/v1 message sets and v2 batches
	if err := os.WriteFile(segment, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.SetKind(testkit.Samsa); err != nil {
		t.Fatal(err)
	}
	mark := b.OutputMark()
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	if got := readPartition(t, ctx, c, plainTopic, 1, 0, kgo.ReadUncommitted(), len(want[1])); !slices.Equal(got, want[1]) {
		t.Errorf("samsa serves %s-1: %s", plainTopic, firstDifference(got, want[1]))
	}
	out := b.OutputSince(mark)
	if !strings.Contains(out, "unsupported log format") || !strings.Contains(out, segment) {
		t.Errorf("samsa did not refuse %s clearly; its output:\n%s", segment, testkit.LastLines(out, 30))
	}
	if after, err := os.ReadFile(segment); err != nil || !bytes.Equal(after, data) {
		t.Errorf("the refused segment was changed (%d bytes, was %d; %v)", len(after), len(data), err)
	}
	// Stopped by the test: the refusal is an ERROR, which is its point.
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
}
