package cleaner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// write is a key's latest record as the producer wrote it: its offset
// (the line number of kcat's input: one partition, idempotent, in order)
// and value, nil for a tombstone.
type write struct {
	offset int64
	value  *string
}

// TestCompactionKcatAndJava is the first done-when check: a
// compacted topic with small segments gets 40 rounds of 1,000 keys and
// then tombstones for 100 of them (written with kcat), and within the
// cleaner's backoff plus a run shrinks to about the key count, with the
// latest value of every live key at its original offset, as kcat and the
// Java console consumer (Kafka 3.9.1) read it.
func TestCompactionKcatAndJava(t *testing.T) {
	kcat := testkit.RequireTool(t, "kcat")
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: []string{"--log.cleaner.backoff.ms", "500"}})
	const topic = "compacted"
	latest, lastTombstone := writeCompacted(t, kcat, b.Addr(), topic)
	began := time.Now()
	for testkit.CleanerCheckpoint(b.DataDir(), topic, 0) <= lastTombstone {
		if time.Since(began) > 60*time.Second {
			t.Fatalf("the cleaner did not clean past offset %d in a minute (checkpoint at %d)", lastTombstone, testkit.CleanerCheckpoint(b.DataDir(), topic, 0))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The filler's first segment may still be cleaned once more (its
	// older filler records removed) after the checkpoint passed the
	// tombstones; kcat and the Java consumer must read the same log, so
	// wait until everything but the active segment is clean.
	partDir := filepath.Join(b.DataDir(), topic+"-0")
	for testkit.CleanerCheckpoint(b.DataDir(), topic, 0) < activeSegmentBase(t, partDir) {
		if time.Since(began) > 60*time.Second {
			t.Fatalf("the cleaner did not reach the active segment (at %d) in a minute (checkpoint at %d)", activeSegmentBase(t, partDir), testkit.CleanerCheckpoint(b.DataDir(), topic, 0))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("cleaned past the tombstones in %v; the partition holds %d bytes of log", time.Since(began).Round(time.Millisecond), logBytes(t, partDir))

	got := readKcat(t, kcat, b.Addr(), topic)
	check(t, "kcat", got, latest, false)
	if testkit.Kafka39Available() {
		k := testkit.RequireKafka39(t)
		check(t, "Java console consumer", readJava(t, k, b.Addr(), topic, len(got)), latest, false)
	} else {
		t.Log("Kafka 3.9.1 is not resolvable here (no Maven cache, no network): the Java consumer check is skipped")
	}
}

// TestCleanerKilled kills the broker (SIGKILL) at random moments while
// its cleaner, throttled to 1 MB/s so a cleaning takes a while, compacts
// the log, and checks after each restart that the log holds only records
// written at their offsets and every live key's latest write; in the end
// the cleaning completes as if nothing had happened.
func TestCleanerKilled(t *testing.T) {
	kcat := testkit.RequireTool(t, "kcat")
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: []string{"--log.cleaner.backoff.ms", "100",
		"--log.cleaner.io.max.bytes.per.second", "1000000"}})
	const topic = "compacted"
	latest, lastTombstone := writeCompacted(t, kcat, b.Addr(), topic)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 19))
	for i := range 6 {
		delay := time.Duration(200+rng.IntN(3000)) * time.Millisecond
		time.Sleep(delay)
		b.Kill()
		if err := b.Start(); err != nil {
			t.Fatalf("restart %d: %v", i, err)
		}
		check(t, fmt.Sprintf("kcat after kill %d (%v after the restart before)", i, delay), readKcat(t, kcat, b.Addr(), topic), latest, true)
	}
	began := time.Now()
	for testkit.CleanerCheckpoint(b.DataDir(), topic, 0) <= lastTombstone {
		if time.Since(began) > 2*time.Minute {
			t.Fatalf("the cleaner did not clean past offset %d after the kills", lastTombstone)
		}
		time.Sleep(100 * time.Millisecond)
	}
	check(t, "kcat after the last cleaning", readKcat(t, kcat, b.Addr(), topic), latest, false)
}

// writeCompacted creates a compacted topic with 64 KiB segments and
// writes, with kcat, 40 rounds of 1,000 keys, tombstones for 100 of them
// and then a filler key until the tombstones' segment rolls. It returns
// each key's latest write and the last tombstone's offset.
func writeCompacted(t *testing.T, kcat, addr, topic string) (map[string]write, int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("65536"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.1"),
	}, topic)
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	latest := map[string]write{}
	all = map[int64]rec{}
	var in bytes.Buffer
	var off int64
	line := func(k string, v *string) {
		if v == nil {
			fmt.Fprintf(&in, "%s:\n", k)
		} else {
			fmt.Fprintf(&in, "%s:%s\n", k, *v)
		}
		latest[k] = write{off, v}
		all[off] = rec{off, k, v}
		off++
	}
	for r := range 40 {
		for k := range 1000 {
			v := fmt.Sprintf("round-%d-key-%d", r, k)
			line(fmt.Sprintf("k-%d", k), &v)
		}
	}
	for k := range 100 {
		line(fmt.Sprintf("k-%d", k*10), nil)
	}
	lastTombstone := off - 1
	// Records of one more key fill the active segment until it rolls, so
	// the tombstones' segment is cleanable (the active one never is).
	filler := strings.Repeat("x", 1000)
	for i := range 80 {
		v := fmt.Sprintf("%d-%s", i, filler)
		line("filler", &v)
	}
	cmd := exec.Command(kcat, "-P", "-b", addr, "-t", topic, "-p", "0", "-K:", "-Z",
		"-X", "enable.idempotence=true", "-X", "linger.ms=20", "-X", "batch.size=16000")
	cmd.Stdin = &in
	// Batches stay under segment.bytes (a larger one is refused, as by
	// Kafka).
	if out, err := cmd.CombinedOutput(); err != nil || bytes.Contains(out, []byte("failed")) {
		t.Fatalf("kcat -P: %v: %s", err, testkit.LastLines(string(out), 10))
	}
	return latest, lastTombstone
}

// all is every record writeCompacted wrote, by offset.
var all map[int64]rec

type rec struct {
	offset int64
	key    string
	value  *string
}

// check: offsets increase, each key's records are its latest write at its
// original offset (the filler's older records sit in the active segment,
// never cleaned), every live key is there, and the log is about its keys.
func check(t *testing.T, who string, recs []rec, latest map[string]write, partial bool) {
	t.Helper()
	seen := map[string]bool{}
	prev := int64(-1)
	for _, r := range recs {
		if r.offset <= prev {
			t.Fatalf("%s: offset %d after %d", who, r.offset, prev)
		}
		prev = r.offset
		w, ok := latest[r.key]
		if (partial || r.key == "filler") && ok && r.offset < w.offset {
			// An older write not cleaned (yet): partial, or the filler in
			// the active segment. It must be the one written there.
			a, ok := all[r.offset]
			if !ok || a.key != r.key || (a.value == nil) != (r.value == nil) || a.value != nil && *a.value != *r.value {
				t.Fatalf("%s: %q at offset %d is not what was written there", who, r.key, r.offset)
			}
			continue
		}
		same := ok && r.offset == w.offset && (r.value == nil) == (w.value == nil) && (r.value == nil || *r.value == *w.value)
		if !same || seen[r.key] {
			t.Fatalf("%s: %q at offset %d is not the key's latest write (offset %d), or seen twice", who, r.key, r.offset, w.offset)
		}
		seen[r.key] = true
	}
	for k, w := range latest {
		if w.value != nil && !seen[k] {
			t.Fatalf("%s: live key %q (latest at %d) missing", who, k, w.offset)
		}
	}
	if !partial && len(recs) > len(latest)+100 {
		t.Fatalf("%s: %d records for %d keys: too many left (more than 100 past the keys)", who, len(recs), len(latest))
	}
	t.Logf("%s: %d records for %d keys, every live key at its latest write", who, len(recs), len(latest))
}

func readKcat(t *testing.T, kcat, addr, topic string) []rec {
	t.Helper()
	out, err := exec.Command(kcat, "-C", "-b", addr, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-J", "-q").Output()
	if err != nil {
		t.Fatalf("kcat -C: %v", err)
	}
	var recs []rec
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			Offset  int64   `json:"offset"`
			Key     *string `json:"key"`
			Payload *string `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("kcat line %q: %v", sc.Text(), err)
		}
		k := ""
		if m.Key != nil {
			k = *m.Key
		}
		recs = append(recs, rec{m.Offset, k, m.Payload})
	}
	return recs
}

// readJava reads n records with Kafka 3.9.1's console consumer (the Java
// KafkaConsumer), printing offset, key and value.
func readJava(t *testing.T, k *testkit.Kafka, addr, topic string, n int) []rec {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := k.Run(ctx, testkit.Kafka39ConsoleConsumer, "--bootstrap-server", addr, "--topic", topic,
		"--partition", "0", "--offset", "earliest", "--max-messages", strconv.Itoa(n), "--timeout-ms", "30000",
		"--property", "print.offset=true", "--property", "print.key=true", "--property", "print.value=true",
		"--property", "null.literal=<null>")
	if err != nil {
		t.Fatalf("console consumer: %v\n%s", err, testkit.LastLines(out, 30))
	}
	var recs []rec
	for _, l := range strings.Split(out, "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) != 3 || !strings.HasPrefix(f[0], "Offset:") {
			continue
		}
		o, err := strconv.ParseInt(strings.TrimPrefix(f[0], "Offset:"), 10, 64)
		if err != nil {
			t.Fatalf("console consumer line %q", l)
		}
		var v *string
		if f[2] != "<null>" {
			s := f[2]
			v = &s
		}
		recs = append(recs, rec{o, f[1], v})
	}
	if len(recs) != n {
		t.Fatalf("console consumer printed %d records, kcat read %d\n%s", len(recs), n, testkit.LastLines(out, 20))
	}
	return recs
}

func logBytes(t *testing.T, dir string) int64 {
	var n int64
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if fi, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".log") {
			n += fi.Size()
		}
	}
	return n
}

// activeSegmentBase is the base offset of the partition's last segment,
// the active one, which the cleaner never cleans.
func activeSegmentBase(t *testing.T, dir string) int64 {
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := int64(-1)
	for _, e := range es {
		name, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok {
			continue
		}
		if o, err := strconv.ParseInt(name, 10, 64); err == nil && o > base {
			base = o
		}
	}
	return base
}
