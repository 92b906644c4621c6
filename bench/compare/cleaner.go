package compare

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/testkit/procstat"
)

// The log cleaner side by side: the same compacted data produced to
// samsa and to Apache Kafka, each broker's cleaner timed from the end of
// production (when min.compaction.lag.ms, an hour until then, is set to
// 0) until its cleaner-offset-checkpoint passes the data. Both
// run with log.cleaner.backoff.ms=100 and the same dedupe buffer, one
// cleaner thread, so the figure is the cleaner's throughput plus at most
// a backoff of detection, and the broker's resident memory is sampled
// while it cleans.

// CleanWorkload is the data a cleaning comparison writes.
type CleanWorkload struct {
	Keys       int // distinct keys
	Rounds     int // times each key is written
	ValueBytes int
	SegmentMiB int
}

// CleanResult is one broker's cleaning.
type CleanResult struct {
	Config     string
	LogBytes   int64         // the log's bytes before cleaning
	AfterBytes int64         // after
	Took       time.Duration // end of production to the checkpoint past the data
	MBps       float64       // LogBytes / Took
	PeakRSS    int64         // resident memory, largest sample while cleaning
	IdleRSS    int64
}

// CleanerConfigs are the two brokers with the cleaner settings the
// comparison needs: samsa from binary, Kafka from classPath.
func CleanerConfigs(binary, classPath string) []Config {
	return []Config{
		SamsaConfig("samsa", binary, false, "--samsa.log.flush.policy", "never", "--log.cleaner.backoff.ms", "100",
			"--log.cleaner.dedupe.buffer.size", "134217728"),
		KafkaConfig("kafka", classPath, false, "log.cleaner.backoff.ms=100", "log.cleaner.dedupe.buffer.size=134217728"),
	}
}

// CompareCleaning starts c, writes w to a compacted topic and times the
// broker's cleaner.
func CompareCleaning(ctx context.Context, c Config, w CleanWorkload) (CleanResult, error) {
	res := CleanResult{Config: c.Name}
	r, err := Start(ctx, c, 2*time.Minute)
	if err != nil {
		return res, err
	}
	defer func() { _ = r.Stop() }() // a cleaning error is the one worth reporting
	res.IdleRSS = r.IdleRSS
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.Addr), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	const topic = "cleaned"
	seg := strconv.Itoa(w.SegmentMiB << 20)
	cr, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr(seg),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
		// Nothing is cleaned while the data is written: the lag is
		// lifted once it all is, and both cleaners start from there.
		"min.compaction.lag.ms": kadm.StringPtr("3600000"),
	}, topic)
	if err == nil {
		err = cr.Err
	}
	if err != nil {
		return res, err
	}
	// Values are random (incompressible), keys fixed width.
	raw := make([]byte, w.ValueBytes/2+1)
	var last int64
	for round := range w.Rounds {
		var recs []*kgo.Record
		for k := range w.Keys {
			_, _ = rand.Read(raw)
			recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "key-%010d", k), Value: []byte(hex.EncodeToString(raw)[:w.ValueBytes])})
			if len(recs) == 10_000 || k == w.Keys-1 {
				pr := cl.ProduceSync(ctx, recs...)
				if err := pr.FirstErr(); err != nil {
					return res, fmt.Errorf("round %d: %w", round, err)
				}
				last = pr[len(pr)-1].Record.Offset
				recs = recs[:0]
			}
		}
	}
	// One more segment's worth of a filler key, so the data's last
	// segment rolls and is cleanable.
	filler := make([]byte, 64<<10)
	for i := 0; i < (w.SegmentMiB<<20)/len(filler)+2; i++ {
		_, _ = rand.Read(filler)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("filler"), Value: filler}).FirstErr(); err != nil {
			return res, err
		}
	}
	dir := filepath.Join(r.dir, "data")
	res.LogBytes = logBytes(filepath.Join(dir, topic+"-0"))
	began := time.Now()
	ar, err := kadm.NewClient(cl).AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "min.compaction.lag.ms", Value: kadm.StringPtr("0")}}, topic)
	if err == nil {
		_, err = ar.On(topic, nil)
	}
	if err != nil {
		return res, fmt.Errorf("lifting min.compaction.lag.ms: %w", err)
	}
	for testkit.CleanerCheckpoint(dir, topic, 0) <= last {
		if u, err := procstat.Read(r.PID); err == nil {
			res.PeakRSS = max(res.PeakRSS, u.RSSBytes)
		}
		if time.Since(began) > 10*time.Minute {
			return res, fmt.Errorf("%s: not cleaned past %d in 10 minutes", c.Name, last)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	res.Took = time.Since(began)
	res.AfterBytes = logBytes(filepath.Join(dir, topic+"-0"))
	res.MBps = float64(res.LogBytes) / res.Took.Seconds() / 1e6
	return res, nil
}

func logBytes(dir string) int64 {
	es, _ := os.ReadDir(dir)
	var n int64
	for _, e := range es {
		if fi, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".log") {
			n += fi.Size()
		}
	}
	return n
}
