package datapath

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// streamsKeys is how many distinct keys the Streams test's input has.
const streamsKeys = 1000

// A Kafka Streams application with processing.guarantee=exactly_once_v2
// (interop/java StreamsEos.java: each input record mapped to OUT, and
// counted per key into COUNTS through a state store and its changelog)
// over recordCount records (1,000,000 by default), with the broker
// killed with SIGKILL about a third of the way through and started
// again, and the application itself killed with SIGKILL two thirds of
// the way and started again on its state directory. Afterwards a read_committed consumer must find in OUT every
// input exactly once and nothing else, and in COUNTS each key's counts
// rising and ending at the number of inputs with that key: whatever
// transactions the crash cut short were aborted (their records invisible)
// and redone, none applied twice.
func TestStreamsExactlyOnceBrokerKilled(t *testing.T) {
	cp := javaClasspath(t)
	// The crashed application's open transaction is aborted once its
	// timeout has passed, looked for every second rather than Kafka's 10.
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: []string{"--transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000"}})
	b.LogOnFailure(t)
	requireDataPath(t, b.Addr())
	n := recordCount(t)
	n -= n % streamsKeys
	in, out, counts := topicName(t, "in"), topicName(t, "out"), topicName(t, "counts")
	for _, topic := range []string{in, out, counts} {
		createTopic(t, b.Addr(), topic, 4, nil)
	}

	// The input: key k<i mod 1000>, value i.
	began := time.Now()
	p := newClient(t, b.Addr(), kgo.DefaultProduceTopic(in), kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(100_000))
	ctx := deadline(t, 15*time.Minute)
	var (
		mu      sync.Mutex
		prodErr error
	)
	for i := range n {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%streamsKeys), Value: strconv.AppendInt(nil, int64(i), 10)}
		p.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				prodErr = err
				mu.Unlock()
			}
		})
	}
	if err := p.Flush(ctx); err != nil || prodErr != nil {
		t.Fatalf("producing the input: %v %v", err, prodErr)
	}
	t.Logf("%d input records produced in %v", n, time.Since(began).Round(time.Millisecond))

	stateDir := t.TempDir()
	app := startStreams(t, cp, b.Addr(), in, out, counts, stateDir)

	// Watch the committed output; kill the broker a third of the way.
	watch := newClient(t, b.Addr(), kgo.ConsumeTopics(out, counts), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RetryTimeout(time.Minute))
	seen, last := 0, map[string]int{}
	finals := 0 // keys whose count has reached n/streamsKeys
	killed, appKilled := false, false
	began = time.Now()
	lastLog := began
	for seen < n || finals < streamsKeys {
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			t.Logf("%v: %d committed outputs, %d counts final", time.Since(began).Round(time.Second), seen, finals)
		}
		if ctx.Err() != nil || !app.running() {
			t.Fatalf("after %v: %d of %d outputs, %d of %d counts final; Streams running %v; its output:\n%s",
				time.Since(began).Round(time.Second), seen, n, finals, streamsKeys, app.running(), testkit.LastLines(app.output(), 80))
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fs := watch.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic == out {
				seen++
				return
			}
			c, _ := strconv.Atoi(string(r.Value))
			if c == n/streamsKeys && last[string(r.Key)] != c {
				finals++
			}
			last[string(r.Key)] = c
		})
		if !killed && seen >= n/3 {
			killed = true
			b.Kill()
			t.Logf("broker killed after %d committed outputs (%v into the run)", seen, time.Since(began).Round(time.Millisecond))
			time.Sleep(2 * time.Second) // Streams meets a dead broker for a while
			if err := b.Start(); err != nil {
				t.Fatalf("restarting the broker: %v", err)
			}
		}
		if killed && !appKilled && seen >= 2*n/3 {
			// The application crashes in its turn, a transaction open:
			// the new instance's producers have new transactional ids,
			// so only the coordinator's timeout (Streams' 10 s
			// transaction.timeout.ms) aborts the old one, which holds
			// the last stable offset until then.
			appKilled = true
			app.kill()
			t.Logf("Streams killed after %d committed outputs (%v into the run)", seen, time.Since(began).Round(time.Millisecond))
			app = startStreams(t, cp, b.Addr(), in, out, counts, stateDir)
		}
	}
	t.Logf("all %d outputs committed %v into the run", n, time.Since(began).Round(time.Millisecond))
	if !killed || !appKilled {
		t.Fatalf("the broker killed %v, Streams killed %v; want both", killed, appKilled)
	}
	// Let Streams commit anything more it would (it must not), then stop
	// it and check from the start.
	time.Sleep(3 * time.Second)
	app.stop(t)
	checkStreamsOutput(t, b.Addr(), out, counts, n)
}

// The same application on a 3-broker cluster (every topic, its own
// included, of replication factor 3), one broker kill -9'd a third of the
// way through and started again five seconds later: partition leaders,
// group and transaction coordinators move, and the output must still be
// exact. recordCount/5 records (200,000 by default).
func TestStreamsExactlyOnceClusterBrokerKilled(t *testing.T) {
	cp := javaClasspath(t)
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa,
		Properties: map[string]string{"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000"}})
	seed := c.Addrs()[0]
	n := recordCount(t) / 5
	n -= n % streamsKeys
	in, out, counts := topicName(t, "in"), topicName(t, "out"), topicName(t, "counts")
	ctx := deadline(t, 10*time.Minute)
	adm := kadm.NewClient(newClient(t, seed))
	if r, err := adm.CreateTopics(ctx, 4, 3, nil, in, out, counts); err != nil || r.Error() != nil {
		t.Fatalf("creating the topics: %v %v", err, r.Error())
	}
	p := newClient(t, seed, kgo.DefaultProduceTopic(in), kgo.RetryTimeout(time.Minute))
	for i := range n {
		p.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%streamsKeys), Value: strconv.AppendInt(nil, int64(i), 10)}, nil)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	app := startStreams(t, cp, c.Bootstrap(), in, out, counts, t.TempDir(), "-Dsamsa.rf=3")
	watch := newClient(t, seed, kgo.ConsumeTopics(out), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RetryTimeout(time.Minute))
	seen, killed := 0, false
	began := time.Now()
	for seen < n {
		if ctx.Err() != nil || !app.running() {
			t.Fatalf("after %v: %d of %d outputs; Streams running %v; its output:\n%s",
				time.Since(began).Round(time.Second), seen, n, app.running(), testkit.LastLines(app.output(), 80))
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		seen += watch.PollFetches(pctx).NumRecords()
		cancel()
		if !killed && seen >= n/3 {
			killed = true
			b := c.Broker(1)
			b.Kill()
			t.Logf("broker %d killed after %d committed outputs (%v into the run)", b.ID(), seen, time.Since(began).Round(time.Millisecond))
			time.Sleep(5 * time.Second) // leaders and coordinators move meanwhile
			if err := b.Start(); err != nil {
				t.Fatalf("restarting broker %d: %v", b.ID(), err)
			}
		}
	}
	t.Logf("all %d outputs committed %v into the run", n, time.Since(began).Round(time.Millisecond))
	time.Sleep(3 * time.Second) // anything more Streams would commit (it must not)
	app.stop(t)
	checkStreamsOutput(t, seed, out, counts, n)
}

// checkStreamsOutput reads OUT and COUNTS from the start under
// read_committed: OUT must hold each value "<i>|done" for i in [0, n)
// exactly once and nothing else, each COUNTS key's counts must rise
// and end at n/streamsKeys.
func checkStreamsOutput(t *testing.T, addr, out, counts string, n int) {
	t.Helper()
	c := newClient(t, addr, kgo.ConsumeTopics(out, counts), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := make([]int32, n)
	seen, extra, bad := 0, 0, 0
	last := map[string]int{}
	var falls []string
	ctx := deadline(t, 5*time.Minute)
	quiet := 0 // consecutive empty polls once everything is read
	for quiet < 3 {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := c.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			t.Fatalf("reading the output: %d of %d read: %v", seen, n, ctx.Err())
		}
		empty := true
		fs.EachRecord(func(r *kgo.Record) {
			empty = false
			if r.Topic == counts {
				v, _ := strconv.Atoi(string(r.Value))
				if v <= last[string(r.Key)] && len(falls) < 10 {
					falls = append(falls, fmt.Sprintf("%s: %d after %d", r.Key, v, last[string(r.Key)]))
				}
				last[string(r.Key)] = v
				return
			}
			seen++
			var i int
			if _, err := fmt.Sscanf(string(r.Value), "%d|done", &i); err != nil || i < 0 || i >= n ||
				string(r.Key) != fmt.Sprintf("k%d", i%streamsKeys) {
				bad++
				return
			}
			if got[i]++; got[i] > 1 {
				extra++
			}
		})
		if empty && seen >= n {
			quiet++
		} else {
			quiet = 0
		}
	}
	missing := 0
	for _, g := range got {
		if g == 0 {
			missing++
		}
	}
	if missing > 0 || extra > 0 || bad > 0 || seen != n {
		t.Errorf("OUT: %d records for %d inputs: %d missing, %d duplicates, %d malformed", seen, n, missing, extra, bad)
	}
	if len(falls) > 0 {
		t.Errorf("COUNTS: a key's count fell or repeated (a transaction applied twice or an aborted one seen): %v", falls)
	}
	wrong := 0
	for k := range streamsKeys {
		if last[fmt.Sprintf("k%d", k)] != n/streamsKeys {
			if wrong++; wrong <= 5 {
				t.Errorf("COUNTS: k%d ends at %d, want %d", k, last[fmt.Sprintf("k%d", k)], n/streamsKeys)
			}
		}
	}
	t.Logf("OUT: %d records, each input once; COUNTS: %d keys at %d", seen, len(last), n/streamsKeys)
}

// streamsApp is the StreamsEos JVM.
type streamsApp struct {
	cmd  *exec.Cmd
	out  *syncWriter
	done chan struct{}
}

type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// startStreams starts StreamsEos on addr (a bootstrap list) with the JVM
// options jvm (-Dsamsa.rf=N: the replication factor of its own topics).
func startStreams(t *testing.T, cp, addr, in, out, counts, stateDir string, jvm ...string) *streamsApp {
	t.Helper()
	a := &streamsApp{out: &syncWriter{}, done: make(chan struct{})}
	args := append(append(jvm, "-cp", cp, "io.samsa.interop.Main", "streams-eos"), addr, "samsa-eos-"+in, in, out, counts, stateDir)
	a.cmd = exec.Command("java", args...)
	a.cmd.Stdout, a.cmd.Stderr = a.out, a.out
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = a.cmd.Wait() // the exit is reported by running() and stop
		close(a.done)
	}()
	t.Cleanup(func() {
		_ = a.cmd.Process.Kill() // fails only when it has exited
		<-a.done
	})
	return a
}

func (a *streamsApp) running() bool {
	select {
	case <-a.done:
		return false
	default:
		return true
	}
}

func (a *streamsApp) output() string {
	a.out.mu.Lock()
	defer a.out.mu.Unlock()
	return a.out.b.String()
}

// kill ends the application with SIGKILL, as a crash would.
func (a *streamsApp) kill() {
	_ = a.cmd.Process.Kill() // fails only when it has exited
	<-a.done
}

// stop ends the application with SIGTERM (it closes its Streams cleanly).
func (a *streamsApp) stop(t *testing.T) {
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("Streams exited before SIGTERM: %v\n%s", err, testkit.LastLines(a.output(), 40))
	}
	select {
	case <-a.done:
	case <-time.After(time.Minute):
		t.Errorf("Streams did not stop within a minute of SIGTERM:\n%s", testkit.LastLines(a.output(), 40))
	}
	t.Logf("Streams' log (end):\n%s", testkit.LastLines(a.output(), 15))
}
