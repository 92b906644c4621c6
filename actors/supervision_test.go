package actors

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire/kerr"
)

// flakyDir is a real segment.Dir whose Open panics a set number of times
// for one partition, the way a bug in recovery would.
type flakyDir struct {
	*segment.Dir
	mu     sync.Mutex
	panics map[string]int // "topic-partition" -> panics left
	opens  map[string]int
	logs   map[string]*segment.Log // the last log opened, by "topic-partition"
	opened chan struct{}           // closed (and replaced) by every Open
}

func (d *flakyDir) Open(topic string, partition int32, cfg segment.Config) (*segment.Log, segment.RecoveryReport, error) {
	key := topic + "-" + string(rune('0'+partition))
	d.mu.Lock()
	d.opens[key]++
	close(d.opened)
	d.opened = make(chan struct{})
	left := d.panics[key]
	if left > 0 {
		d.panics[key] = left - 1
	}
	d.mu.Unlock()
	if left > 0 {
		panic("flaky open of " + key)
	}
	l, rep, err := d.Dir.Open(topic, partition, cfg)
	d.mu.Lock()
	d.logs[key] = l
	d.mu.Unlock()
	return l, rep, err
}

func (d *flakyDir) log(key string) *segment.Log {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.logs[key]
}

func (d *flakyDir) count(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opens[key]
}

// waitOpens waits until key has been opened more than n times, or
// timeout; it reports whether it was.
func (d *flakyDir) waitOpens(key string, n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		d.mu.Lock()
		more, opened := d.opens[key] > n, d.opened
		d.mu.Unlock()
		if more {
			return true
		}
		select {
		case <-opened:
		case <-deadline:
			return false
		}
	}
}

// LogWatch is a slog.Handler that drops every record and closes Seen the
// first time a record's message starts with its text: how a test waits
// for an event the broker reports only in its log. Exported for the
// external tests (package actors_test) too.
type LogWatch struct {
	text string
	once sync.Once
	seen chan struct{}
}

// NewLogWatch watches for records whose message starts with text.
func NewLogWatch(text string) *LogWatch { return &LogWatch{text: text, seen: make(chan struct{})} }

// Seen is closed once a matching record has been logged.
func (w *LogWatch) Seen() <-chan struct{} { return w.seen }

func (w *LogWatch) Enabled(context.Context, slog.Level) bool { return true }

func (w *LogWatch) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, w.text) {
		w.once.Do(func() { close(w.seen) })
	}
	return nil
}

func (w *LogWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *LogWatch) WithGroup(string) slog.Handler      { return w }

func startFlaky(t *testing.T, dir string, panics map[string]int) (*Broker, *flakyDir) {
	t.Helper()
	return startFlakyLogged(t, dir, panics, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func startFlakyLogged(t *testing.T, dir string, panics map[string]int, logger *slog.Logger) (*Broker, *flakyDir) {
	t.Helper()
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{"log.dirs": dir}})
	if err != nil {
		t.Fatal(err)
	}
	var fd *flakyDir
	opts := Options{openDir: func(path string, dopts segment.Options) (partition.LogDir, error) {
		sd, err := segment.OpenDir(path, dopts)
		fd = &flakyDir{Dir: sd, panics: panics, opens: map[string]int{}, logs: map[string]*segment.Log{}, opened: make(chan struct{})}
		return fd, err
	}}
	b, err := NewBroker(cfg, logger, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b, fd
}

// A partition actor that panics while opening is restarted and opens its
// log from disk; the broker's start waits for that, not forever.
func TestPartitionRestartReopensLog(t *testing.T) {
	dir := t.TempDir()
	b, _ := startFlaky(t, dir, nil)
	createTopic(t, b, "flaky", 2)
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}

	b, fd := startFlaky(t, dir, map[string]int{"flaky-1": 2})
	defer b.Close(t.Context())
	if got := fd.count("flaky-1"); got != 3 {
		t.Fatalf("flaky-1 opened %d times, want 3 (two panics, then success)", got)
	}
	if got := fd.count("flaky-0"); got != 1 {
		t.Fatalf("flaky-0 opened %d times, want 1: its sibling's failure must not restart it", got)
	}
	if sizes := logSizes(t, b); len(sizes) != 2 {
		t.Fatalf("DescribeLogDirs after restart: %v", sizes)
	}
}

// A partition that keeps failing is stopped by its supervisor; the
// broker still starts and serves the other partitions.
func TestPartitionGivingUpDoesNotBlockStart(t *testing.T) {
	dir := t.TempDir()
	b, _ := startFlaky(t, dir, nil)
	createTopic(t, b, "doomed", 2)
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The metadata actor logs this as it takes the stopped partition out
	// (on the Terminated notice, which reaches it after the broker's
	// start has returned).
	forgotten := NewLogWatch("partition actor stopped after repeated failures")
	b, fd := startFlakyLogged(t, dir, map[string]int{"doomed-0": 1000}, slog.New(forgotten))
	defer b.Close(t.Context())
	if got := fd.count("doomed-0"); got < 2 {
		t.Fatalf("doomed-0 opened %d times; the supervisor should have retried", got)
	}
	if _, ok := b.Routes().Partition("doomed", 1); !ok {
		t.Fatal("the healthy partition lost its route")
	}
	// Metadata reports the failed partition without a leader once the
	// metadata actor has seen its actor stop. The log line is written
	// while the actor handles the stop, so this Metadata request, queued
	// after it, is answered from the state that follows.
	select {
	case <-forgotten.Seen():
	case <-time.After(10 * time.Second):
		t.Fatal("the metadata actor never took the failed partition out")
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("doomed")}}
	parts := call(t, b, req).(*kmsg.MetadataResponse).Topics[0].Partitions
	if parts[0].Leader != -1 || parts[0].ErrorCode != kerr.LeaderNotAvailable.Int16() {
		t.Fatalf("failed partition still reported with a leader: %+v", parts[0])
	}
	if parts[1].Leader != 0 || parts[1].ErrorCode != 0 {
		t.Fatalf("healthy partition reported %+v", parts[1])
	}
}

// Altered topic configs reach the running logs, and broker-wide dynamic
// defaults reach every topic that does not override them.
func TestAlterConfigsAppliesToRunningLogs(t *testing.T) {
	b, fd := startFlaky(t, t.TempDir(), nil)
	defer b.Close(t.Context())
	createTopic(t, b, "live", 2)
	createTopic(t, b, "other", 1)

	alter := func(typ kmsg.ConfigResourceType, name, key, value string) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = typ, name
		res.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: key, Value: kmsg.StringPtr(value)}}
		req.Resources = append(req.Resources, res)
		if r := call(t, b, req).(*kmsg.IncrementalAlterConfigsResponse); r.Resources[0].ErrorCode != 0 {
			t.Fatalf("alter %s=%s: %d", key, value, r.Resources[0].ErrorCode)
		}
		// Every partition actor handles the reconfigure before this
		// DescribeLogDirs (same sender, FIFO mailboxes), and answering it
		// orders its writes before our reads below.
		logSizes(t, b)
	}
	alter(kmsg.ConfigResourceTypeTopic, "live", "segment.bytes", "2097152")
	alter(kmsg.ConfigResourceTypeTopic, "live", "samsa.flush.policy", "always")
	for _, key := range []string{"live-0", "live-1"} {
		c := fd.log(key).Config()
		if c.SegmentBytes != 2097152 || c.FlushPolicy != segment.FlushAlways {
			t.Fatalf("%s config after alter: %+v", key, c)
		}
	}
	if c := fd.log("other-0").Config(); c.SegmentBytes == 2097152 {
		t.Fatal("a topic alter reached another topic")
	}
	alter(kmsg.ConfigResourceTypeBroker, "", "log.retention.ms", "5000")
	for _, key := range []string{"live-0", "live-1", "other-0"} {
		if c := fd.log(key).Config(); c.RetentionMs != 5000 {
			t.Fatalf("%s retention after broker default: %d", key, c.RetentionMs)
		}
	}
}

// A partition actor restarted by its supervisor re-opens its log with the
// topic config as altered since the broker started, not as it was then.
func TestRestartedPartitionKeepsAlteredConfig(t *testing.T) {
	b, fd := startFlaky(t, t.TempDir(), nil)
	defer b.Close(t.Context())
	createTopic(t, b, "kept", 1)

	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "kept"
	res.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "segment.bytes", Value: kmsg.StringPtr("3145728")}}
	req.Resources = append(req.Resources, res)
	if r := call(t, b, req).(*kmsg.IncrementalAlterConfigsResponse); r.Resources[0].ErrorCode != 0 {
		t.Fatalf("alter: %d", r.Resources[0].ErrorCode)
	}
	logSizes(t, b) // orders the reconfigure before what follows

	pid, ok := b.Routes().Partition("kept", 0)
	if !ok {
		t.Fatal("no partition actor for kept-0")
	}
	opens := fd.count("kept-0")
	// A message that makes the actor panic, as a bug would (a produce
	// with nowhere to put its answer): the supervisor restarts it and the
	// new incarnation opens the log again.
	b.env.Send(pid, &partition.ProduceRequest{Out: nil})
	if !fd.waitOpens("kept-0", opens, 10*time.Second) {
		t.Fatal("the partition actor was not restarted after its panic")
	}
	logSizes(t, b) // the new incarnation has finished starting
	if c := fd.log("kept-0").Config(); c.SegmentBytes != 3145728 {
		t.Fatalf("after a restart the log has segment.bytes %d, want the altered 3145728", c.SegmentBytes)
	}
}
