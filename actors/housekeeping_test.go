package actors

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// startBrokerWith starts a broker on dir with extra broker configs.
func startBrokerWith(t *testing.T, dir string, kv map[string]string, opts ...Options) *Broker {
	t.Helper()
	values := map[string]string{"log.dirs": dir}
	for k, v := range kv {
		values[k] = v
	}
	cfg, err := config.Load(config.Input{Origin: "test", Values: values})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBroker(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Close(ctx)
	})
	return b
}

// housekeepingPasses returns Options whose hook signals each periodic
// pass named pass on the returned channel. Signals coalesce (a pass that
// finds one pending adds none) and the housekeeping goroutine never
// waits for the test.
func housekeepingPasses(pass string) (Options, <-chan struct{}) {
	done := make(chan struct{}, 1)
	return Options{housekept: func(p string) {
		if p != pass {
			return
		}
		select {
		case done <- struct{}{}:
		default:
		}
	}}, done
}

// Retention runs on its own schedule: segments older than retention.ms go
// and the log start offset moves past them, with no request asking.
func TestRetentionRunsPeriodically(t *testing.T) {
	opts, passed := housekeepingPasses("retention")
	b := startBrokerWith(t, t.TempDir(), map[string]string{"log.retention.check.interval.ms": "20"}, opts)
	// A tiny segment.bytes rolls a segment per batch; an hour-old
	// timestamp is far past retention.ms.
	createTopicWith(t, b, "old", 1, "segment.bytes", "100", "retention.ms", "60000")
	old := time.Now().Add(-time.Hour).UnixMilli()
	for i := range 4 {
		mustProduce(t, b, "old", 0, batchtest.Plain(3, old), int64(3*i))
	}
	// Each pass is followed by a look at the log start offset: the
	// ListOffsets reaches the partition actor after that pass's
	// ApplyRetention.
	deadline := time.After(10 * time.Second)
	for {
		start := listOffset(t, b, "old", 0, -2).Offset
		// The active segment is never deleted: the last batch stays.
		if start == 9 {
			break
		}
		select {
		case <-passed:
		case <-deadline:
			t.Fatalf("log start offset still %d after 10s; retention did not run", start)
		}
	}
	if end := listOffset(t, b, "old", 0, -1).Offset; end != 12 {
		t.Fatalf("log end offset %d after retention, want 12", end)
	}
}

// Recovery checkpoints are written on their own schedule, not only at a
// clean shutdown, so a crash rescans only what came after the last one.
func TestRecoveryCheckpointWrittenPeriodically(t *testing.T) {
	dir := t.TempDir()
	opts, passed := housekeepingPasses("checkpoint")
	b := startBrokerWith(t, dir, map[string]string{"log.flush.offset.checkpoint.interval.ms": "20"}, opts)
	createTopicWith(t, b, "ck", 1)
	mustProduce(t, b, "ck", 0, batchtest.Plain(5, time.Now().UnixMilli()), 0)
	waitCheckpoint(t, filepath.Join(dir, "recovery-point-offset-checkpoint"), passed, "ck 0 5")
}

// waitCheckpoint waits, pass by pass (each has written the file by the
// time it signals), until the checkpoint file at path has want after
// its version line, failing t after 10 s.
func waitCheckpoint(t *testing.T, path string, passed <-chan struct{}, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		raw, _ := os.ReadFile(path)
		if strings.HasPrefix(string(raw), "0\n") && strings.Contains(string(raw), "\n"+want+"\n") {
			return
		}
		select {
		case <-passed:
		case <-deadline:
			t.Fatalf("%s after 10s:\n%s", filepath.Base(path), raw)
		}
	}
}

// The high watermark checkpoint (replication-offset-checkpoint) is
// written every replica.high.watermark.checkpoint.interval.ms, in
// Kafka's format.
func TestHighWatermarkCheckpointWrittenPeriodically(t *testing.T) {
	dir := t.TempDir()
	opts, passed := housekeepingPasses("hw-checkpoint")
	b := startBrokerWith(t, dir, map[string]string{"replica.high.watermark.checkpoint.interval.ms": "20"}, opts)
	createTopicWith(t, b, "hw", 1)
	mustProduce(t, b, "hw", 0, batchtest.Plain(7, time.Now().UnixMilli()), 0)
	waitCheckpoint(t, filepath.Join(dir, "replication-offset-checkpoint"), passed, "hw 0 7")
}
