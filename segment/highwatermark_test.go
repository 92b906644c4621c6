package segment

import (
	"strconv"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

// TestHighWatermarkCheckpoint: the partition's high watermark reaches
// replication-offset-checkpoint in Kafka's format (periodically and on
// Close), comes back when the log reopens, never past the log's end nor
// below its start, and a partition without one is written at its log
// start.
func TestHighWatermarkCheckpoint(t *testing.T) {
	cfg := Config{SegmentBytes: 2000}
	mem, d, l, _ := filledLog(t, cfg, 12, 3)
	end := l.LogEndOffset()
	if got := l.HighWatermark(); got != -1 {
		t.Fatalf("a new log's high watermark %d, want -1", got)
	}
	other, _, err := d.Open("other", 3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, other, makeBatch(2, 10, 1, 1), 1)
	l.SetHighWatermark(end - 2)
	if err := d.CheckpointHighWatermarks(); err != nil {
		t.Fatal(err)
	}
	raw, err := vfs.ReadFile(mem, "/data/"+ReplicationFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n2\nother 3 0\ntopic 0 " + strconv.FormatInt(end-2, 10) + "\n"; string(raw) != want {
		t.Fatalf("checkpoint %q, want %q", raw, want)
	}
	l.SetHighWatermark(end - 1)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2 := testDir(t, mem)
	l2, _ := openLog(t, d2, cfg)
	if got := l2.HighWatermark(); got != end-1 {
		t.Fatalf("after a clean restart the high watermark is %d, want %d", got, end-1)
	}
	// A checkpoint past the log (its tail was lost) gives the log end.
	l2.SetHighWatermark(end + 100)
	if got := l2.HighWatermark(); got != end {
		t.Fatalf("high watermark past the end read %d, want %d", got, end)
	}
	if _, err := l2.DeleteRecordsBefore(5); err != nil {
		t.Fatal(err)
	}
	l2.SetHighWatermark(2)
	if got := l2.HighWatermark(); got != l2.LogStartOffset() {
		t.Fatalf("high watermark below the start read %d, want %d", got, l2.LogStartOffset())
	}
	// A removed partition leaves the file.
	if err := d2.Remove("topic", 0); err != nil {
		t.Fatal(err)
	}
	raw, _ = vfs.ReadFile(mem, "/data/"+ReplicationFile)
	if want := "0\n1\nother 3 0\n"; string(raw) != want {
		t.Fatalf("after removal %q, want %q", raw, want)
	}
}
