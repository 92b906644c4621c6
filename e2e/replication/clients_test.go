package replication

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// Clients other than franz-go ride through leader crashes: Apache Kafka's
// Java client (kafka-clients 3.9.1, producing and consuming in one JVM,
// testdata/RideThrough.java) and librdkafka (kcat, one producer and one
// consumer) write to and read the durable topic (RF 3,
// min.insync.replicas=2) with acks=all and idempotence while the leader
// of partition 0 is killed with SIGKILL and restarted, twice (each kill
// costs the ZooKeeper session timeout before a new leader is elected; the
// Go client's own test, TestKillTheLeaderFiveTimesUnderLoad, does five). Each
// must end without giving up on a record (no non-retriable error, none
// timed out), both consumers must have seen every record produced, and
// franz-go reads every one of them back exactly once.
func TestRealClientsRideThroughLeaderKills(t *testing.T) {
	kafka := testkit.RequireKafka39(t)
	kcat := testkit.RequireTool(t, "kcat")
	start := time.Now()
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Brokers: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	adm := createDurableTopic(t, ctx, c)
	t.Logf("cluster and topic ready in %v", time.Since(start).Round(time.Millisecond))

	// kcat's consumer, from the start of every partition, all along.
	watch := newValueSet()
	kcons := exec.CommandContext(ctx, kcat, "-C", "-b", c.Bootstrap(), "-t", topic, "-o", "beginning", "-u", "-q", "-f", "%s\n")
	consOut, err := kcons.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var consErr strings.Builder
	kcons.Stderr = &consErr
	if err := kcons.Start(); err != nil {
		t.Fatal(err)
	}
	consDone := make(chan struct{})
	go func() {
		defer close(consDone)
		watch.read(consOut)
	}()
	defer func() {
		_ = kcons.Process.Kill()
		<-consDone
		_ = kcons.Wait()
	}()

	// The Java client: producer and consumer until its stdin closes.
	script, err := filepath.Abs(filepath.Join("testdata", "RideThrough.java"))
	if err != nil {
		t.Fatal(err)
	}
	argv := kafka.JavaArgs([]string{"-Dlog4j.configuration=file:" + kafka.ToolsLog4j}, script, c.Bootstrap(), topic, "java")
	java := exec.CommandContext(ctx, argv[0], argv[1:]...)
	javaIn, err := java.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var javaOut, javaErr lockedBuffer
	java.Stdout, java.Stderr = &javaOut, &javaErr
	if err := java.Start(); err != nil {
		t.Fatal(err)
	}
	javaDone := make(chan error, 1)
	go func() { javaDone <- java.Wait() }()

	// kcat's producer, fed about 1,000 lines a second.
	kprod := exec.CommandContext(ctx, kcat, "-P", "-b", c.Bootstrap(), "-t", topic,
		"-X", "enable.idempotence=true", "-X", "acks=all", "-X", "message.timeout.ms=300000", "-X", "linger.ms=5")
	kprodIn, err := kprod.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var kprodOut lockedBuffer
	kprod.Stdout, kprod.Stderr = &kprodOut, &kprodOut
	if err := kprod.Start(); err != nil {
		t.Fatal(err)
	}
	kprodDone := make(chan error, 1)
	go func() { kprodDone <- kprod.Wait() }()
	stopFeed := make(chan struct{})
	fed := make(chan int, 1)
	go func() {
		n := 0
		defer func() { fed <- n }()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopFeed:
				return
			case <-tick.C:
			}
			var batch strings.Builder
			for range 100 {
				fmt.Fprintf(&batch, "kcat-%07d\n", n)
				n++
			}
			if _, err := io.WriteString(kprodIn, batch.String()); err != nil {
				n -= 100 // not handed over (kcat is gone; its exit says why)
				return
			}
		}
	}()

	progress := func(what string) {
		j, k := watch.count("java-"), watch.count("kcat-")
		waitFor(t, ctx, what, func() bool { return watch.count("java-") > j+500 && watch.count("kcat-") > k+500 })
	}
	began := time.Now()
	progress("both clients' records consumed by kcat")
	t.Logf("both clients under way after %v", time.Since(began).Round(time.Millisecond))
	for round := range 2 {
		leader := leaderOf(t, ctx, adm, 0)
		b := c.BrokerByID(leader)
		b.Kill()
		t.Logf("round %d: killed broker %d, leader of partition 0", round+1, leader)
		progress("both clients writing with the leader dead")
		if err := b.Start(); err != nil {
			t.Fatalf("restart broker %d: %v", leader, err)
		}
		waitISR(t, ctx, adm, 3)
		progress("both clients writing after the restart")
		t.Logf("round %d: broker %d back in every ISR, %v since the start", round+1, leader, time.Since(began).Round(time.Millisecond))
	}

	close(stopFeed)
	kcatSent := <-fed
	_ = kprodIn.Close()
	_ = javaIn.Close()
	for name, done := range map[string]chan error{"kcat -P": kprodDone, "java RideThrough": javaDone} {
		select {
		case err := <-done:
			if err != nil {
				out := kprodOut.String()
				if name != "kcat -P" {
					out = javaOut.String() + "\n" + testkit.LastLines(javaErr.String(), 40)
				}
				t.Errorf("%s: %v\n%s", name, err, testkit.LastLines(out, 40))
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s did not finish within 2 minutes of its input's end", name)
		}
	}
	// kcat logs broker disconnects as errors while it retries; a record it
	// gave up on is a delivery failure, an idempotence breach is fatal.
	if out := kprodOut.String(); strings.Contains(out, "Delivery failed") || strings.Contains(out, "atal") {
		t.Errorf("kcat -P reported errors:\n%s", testkit.LastLines(out, 40))
	}
	m := regexp.MustCompile(`SENT (\d+) FAILED (\d+) CONSUMED (\d+)`).FindStringSubmatch(javaOut.String())
	if m == nil {
		t.Fatalf("java RideThrough printed no summary:\n%s\n%s", javaOut.String(), testkit.LastLines(javaErr.String(), 40))
	}
	javaSent, _ := strconv.Atoi(m[1])
	t.Logf("java: %s; kcat -P: %d lines; %v since the start", m[0], kcatSent, time.Since(began).Round(time.Millisecond))

	acked := map[string]bool{}
	for i := range javaSent {
		acked[fmt.Sprintf("java-%07d", i)] = true
	}
	for i := range kcatSent {
		acked[fmt.Sprintf("kcat-%07d", i)] = true
	}
	waitFor(t, ctx, "kcat's consumer to have read every record", func() bool {
		return watch.count("java-") >= javaSent && watch.count("kcat-") >= kcatSent
	})
	t.Logf("kcat's consumer read them all, %v since the start", time.Since(began).Round(time.Millisecond))
	readBackExactlyOnce(t, ctx, c, acked)
	t.Logf("%d records from Java and librdkafka through two leader kills, all read back once; %v since the start", len(acked), time.Since(began).Round(time.Millisecond))
}

// valueSet collects the distinct values a consumer printed, one a line.
type valueSet struct {
	mu   sync.Mutex
	seen map[string]bool
	n    map[string]int // distinct values by prefix
}

func newValueSet() *valueSet { return &valueSet{seen: map[string]bool{}, n: map[string]int{}} }

func (s *valueSet) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		v := sc.Text()
		s.mu.Lock()
		if !s.seen[v] {
			s.seen[v] = true
			if prefix, _, ok := strings.Cut(v, "-"); ok {
				s.n[prefix+"-"]++
			}
		}
		s.mu.Unlock()
	}
}

func (s *valueSet) count(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[prefix]
}

// lockedBuffer is an output sink safe to read while a process writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
