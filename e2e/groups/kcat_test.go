package groups

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// A librdkafka balanced consumer (kcat -G) and a franz-go member share a
// group with the range assignor. kcat is then SIGKILLed: it sends no
// LeaveGroup, so the broker keeps it (and its partitions) until its
// six-second session runs out, then hands everything to the survivor,
// which consumes the records produced meanwhile.
func TestKcatKilledMemberLosesPartitionsAfterSessionTimeout(t *testing.T) {
	kcat := testkit.RequireTool(t, "kcat")
	b := sharedBroker(t)
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, 4)
	adm := admin(t, b.Addr())

	cmd := exec.Command(kcat, "-b", b.Addr(), "-G", group, topic, "-q", "-u", "-f", "%p:%o:%s\n",
		"-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500",
		"-X", "partition.assignment.strategy=range", "-X", "auto.offset.reset=earliest")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	start := time.Now()
	waitGroup(t, adm, group, 20*time.Second, stableWith(topic, 1, 4))
	t.Logf("kcat alone is Stable after %v", time.Since(start))

	// kcat consumes while it is alone.
	produce(t, b.Addr(), topic, 0, 8)
	for got := 0; got < 8; got++ {
		select {
		case <-lines:
		case <-time.After(15 * time.Second):
			t.Fatalf("kcat consumed %d of 8 records; stderr: %s", got, stderr.String())
		}
	}

	c := newTally()
	startMember(t, b.Addr(), group, topic, c, kgo.Balancers(kgo.RangeBalancer()))
	g := waitGroup(t, adm, group, 30*time.Second, stableWith(topic, 2, 4))
	t.Logf("two members Stable after %v", time.Since(start))
	var kcatID string
	for _, m := range g.Members {
		if strings.HasPrefix(m.ClientID, "rdkafka") {
			kcatID = m.MemberID
		}
	}
	if kcatID == "" {
		t.Fatalf("no librdkafka member in %+v", g.Members)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	// Still a member right after the kill: the broker waits for the
	// session timeout, not for the TCP connection to drop.
	g = waitGroup(t, adm, group, 5*time.Second, func(g kadm.DescribedGroup) bool { return len(g.Members) >= 1 })
	stillThere := false
	for _, m := range g.Members {
		stillThere = stillThere || m.MemberID == kcatID
	}
	if !stillThere && time.Since(killed) < 2*time.Second {
		t.Errorf("the killed member was removed %v after the kill, before its 6s session could expire", time.Since(killed))
	}
	waitGroup(t, adm, group, 20*time.Second, stableWith(topic, 1, 4))
	t.Logf("the killed member's partitions moved %v after SIGKILL (session timeout 6s)", time.Since(killed).Round(100*time.Millisecond))

	// The survivor now owns every partition: it consumes what follows.
	produce(t, b.Addr(), topic, 100, 40)
	want := 40
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		c.mu.Lock()
		got := 0
		for v := range c.seen {
			if len(v) == 3 && v[0] == '1' { // "100".."139"
				got++
			}
		}
		c.mu.Unlock()
		if got == want {
			t.Logf("the survivor consumed the new records %v after the kill", time.Since(killed))
			return
		}
	}
	t.Fatalf("the surviving member did not consume the %d records produced after the kill", want)
}
