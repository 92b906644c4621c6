package e2e

import (
	"encoding/binary"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// The broker's resource limits, tested on a real `samsa serve` process
// under limits the test applies to it (prlimit), at the level where the
// defects showed (issue 15).

// pollUntil polls cond every few milliseconds until it holds, failing t
// with what after d.
func pollUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openDescriptors counts the descriptors process pid has open (0 if it
// cannot tell).
func openDescriptors(pid int) int {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

// serves reports whether a new connection to addr gets a Metadata answer.
func serves(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(metadataV12(1, []byte("probe"), []byte{0})); err != nil {
		return false
	}
	var size [4]byte
	_, err = c.Read(size[:])
	return err == nil
}

// flood opens n TCP connections to addr and closes them when t ends. The
// kernel completes a handshake whether or not the broker accepts, so each
// dial succeeds.
func flood(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			break // the backlog is full: enough
		}
		conns = append(conns, c)
	}
	return conns
}

// At its descriptor limit the broker keeps serving the connections it has,
// sheds new ones with a log line, and serves new ones again once some
// close. Before, gnet's acceptor took EMFILE as fatal and stopped the
// engine: every connection closed, the port refused new ones, and the
// process lived on.
func TestDescriptorLimitKeepsServing(t *testing.T) {
	requireTool(t, "prlimit")
	b := testkit.StartBroker(t, testkit.BrokerConfig{
		Limits: []string{"--nofile=128"},
		// Above what 128 descriptors can hold, so accept itself fails.
		Args: []string{"--max.connections", "100000"},
	})
	keep := dial(t, b.Addr())
	defer keep.Close()
	_, _ = keep.Write(metadataV12(1, []byte("keep"), []byte{0}))
	expectMetadataAnswer(t, "before the flood", keep, 1)

	mark := b.OutputMark()
	conns := flood(t, b.Addr(), 300)
	pollUntil(t, 10*time.Second, "the broker to reach its descriptor limit", func() bool {
		out := b.OutputSince(mark)
		return strings.Contains(out, "out of file descriptors") || strings.Contains(out, "Accept() failed") ||
			openDescriptors(b.PID()) >= 120
	})
	if !b.Running() {
		t.Fatal("the broker exited")
	}
	_, _ = keep.Write(metadataV12(2, []byte("keep"), []byte{0}))
	expectMetadataAnswer(t, "at the descriptor limit", keep, 2)

	for _, c := range conns {
		c.Close()
	}
	pollUntil(t, 10*time.Second, "a new connection to be served after the flood closed", func() bool {
		return serves(b.Addr())
	})
	_, _ = keep.Write(metadataV12(3, []byte("keep"), []byte{0}))
	expectMetadataAnswer(t, "after the flood", keep, 3)
}

// With max.connections at its default, derived from the descriptor limit,
// the listener stops accepting at the limit (as Kafka's acceptor waits
// for a slot; the extra connections wait in the backlog, holding no
// descriptor) before descriptors run out.
func TestDefaultMaxConnectionsFollowsDescriptorLimit(t *testing.T) {
	requireTool(t, "prlimit")
	b := testkit.StartBroker(t, testkit.BrokerConfig{Limits: []string{"--nofile=256"}})
	keep := dial(t, b.Addr())
	defer keep.Close()
	mark := b.OutputMark()
	flood(t, b.Addr(), 300)
	pollUntil(t, 10*time.Second, "the listener to wait at max.connections", func() bool {
		return strings.Contains(b.OutputSince(mark), "max.connections reached")
	})
	if out := b.OutputSince(mark); strings.Contains(out, "out of file descriptors") {
		t.Errorf("the default max.connections let descriptors run out:\n%s", out)
	}
	_, _ = keep.Write(metadataV12(1, []byte("keep"), []byte{0}))
	expectMetadataAnswer(t, "after the flood", keep, 1)
}

// drained counts the established connections to the broker at addr
// whose broker side has nothing waiting in its receive queue: the broker
// has read all they sent (/proc/net/tcp, IPv4).
func drained(t *testing.T, addr string) int {
	t.Helper()
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("cannot read /proc/net/tcp: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 || f[3] != "01" { // 01: ESTABLISHED
			continue
		}
		local := strings.Split(f[1], ":")
		queues := strings.Split(f[4], ":")
		if len(local) != 2 || len(queues) != 2 {
			continue
		}
		if p, _ := strconv.ParseInt(local[1], 16, 32); int(p) != port {
			continue
		}
		if rx, _ := strconv.ParseInt(queues[1], 16, 64); rx == 0 {
			n++
		}
	}
	return n
}

// slowSenders opens n connections that each announce a frame of size
// bytes (a Produce request header follows, so it is a real request), send
// sent bytes of it and stall.
func slowSenders(t *testing.T, addr string, n, size, sent int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	part := make([]byte, sent)
	binary.BigEndian.PutUint32(part, uint32(size))
	copy(part[4:], requestHeader(0, 7, 1, false))
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, c)
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(part); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	return conns
}

// Slow senders cannot exhaust the broker's memory. Three waves of 250
// connections each announce a 16 MiB request, send 128 KiB of it and
// stall (the first 16 KiB, then the rest once the broker has read those).
// Each used to get a 16 MiB buffer (times 1.25) as soon as its size
// arrived: 5 GiB a wave. The broker runs under an address-space limit
// (prlimit --as) and, where the test may create one, in a memory cgroup
// (v1) of 1 GiB; it keeps serving produce and fetch throughout, and gives
// the memory back once the senders have gone.
func TestSlowSendersBoundedMemory(t *testing.T) {
	t.Run("AddressSpace", func(t *testing.T) {
		requireTool(t, "prlimit")
		const asLimit = 3 << 30 // about 1.9 GiB of it is the Go runtime's reservations at rest
		b := testkit.StartBroker(t, testkit.BrokerConfig{Limits: []string{"--as=" + strconv.Itoa(asLimit)}})
		slowSenderWaves(t, b)
	})
	t.Run("Cgroup", func(t *testing.T) {
		const root = "/sys/fs/cgroup/memory"
		dir := root + "/samsa-e2e-" + strconv.Itoa(os.Getpid())
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("no writable memory cgroup (v1) here, the address-space variant stands alone: %v", err)
		}
		t.Cleanup(func() { _ = os.Remove(dir) }) // after the broker has stopped (cleanups run last first)
		if err := os.WriteFile(dir+"/memory.limit_in_bytes", []byte(strconv.Itoa(1<<30)), 0o644); err != nil {
			t.Skipf("cannot set a cgroup memory limit: %v", err)
		}
		b := testkit.StartBroker(t, testkit.BrokerConfig{})
		if err := os.WriteFile(dir+"/cgroup.procs", []byte(strconv.Itoa(b.PID())), 0o644); err != nil {
			t.Skipf("cannot move the broker into the cgroup: %v", err)
		}
		slowSenderWaves(t, b)
	})
}

func slowSenderWaves(t *testing.T, b *testkit.BrokerProcess) {
	ctx := testContext(t)
	topic := topicName(t, "t")
	cl := newClient(t, b.Addr(), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	produced := 0
	produce := func(what string) {
		t.Helper()
		if err := cl.ProduceSync(ctx, kgo.StringRecord(what)).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", what, err)
		}
		produced++
	}
	died := func(when string) {
		t.Helper()
		var fatal []string
		for _, l := range strings.Split(b.Output(), "\n") {
			if strings.Contains(l, "fatal error") || strings.Contains(l, "out of memory") {
				fatal = append(fatal, l)
			}
		}
		t.Fatalf("the broker died %s (%s): %q", when, b.ExitState(), fatal)
	}
	produce("before")
	for wave := range 3 {
		conns := slowSenders(t, b.Addr(), 250, 16<<20, 16<<10)
		// Wait until the broker has read all of it from every one of them
		// (a frame's buffer is allocated then), or died trying.
		pollUntil(t, 20*time.Second, "the broker to read the wave's first bytes", func() bool {
			if !b.Running() {
				died("in wave " + strconv.Itoa(wave))
			}
			return drained(t, b.Addr()) >= 250
		})
		// Past the first buffer: 16 of them fit in the default
		// queued.max.request.bytes and grow, the others wait unread.
		more := make([]byte, 112<<10)
		for _, c := range conns {
			if _, err := c.Write(more); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
		produce("during wave " + strconv.Itoa(wave))
		for _, c := range conns {
			c.Close()
		}
	}
	produce("after")
	if !b.Running() {
		died("after the waves")
	}
	// Everything acknowledged is there.
	cons := newClient(t, b.Addr(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < produced; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("fetch: %v", err)
		}
		got += fs.NumRecords()
	}
	// The memory the waves took goes back to the OS.
	pollUntil(t, 15*time.Second, "the broker's resident memory to come back under 200 MiB", func() bool {
		u, err := b.Usage()
		return err == nil && u.RSSBytes < 200<<20
	})
}
