package e2e

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

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
// extra connections are refused by the limit before descriptors run out.
func TestDefaultMaxConnectionsFollowsDescriptorLimit(t *testing.T) {
	requireTool(t, "prlimit")
	b := testkit.StartBroker(t, testkit.BrokerConfig{Limits: []string{"--nofile=256"}})
	keep := dial(t, b.Addr())
	defer keep.Close()
	mark := b.OutputMark()
	flood(t, b.Addr(), 300)
	pollUntil(t, 10*time.Second, "a refusal by max.connections", func() bool {
		return strings.Contains(b.OutputSince(mark), "max.connections (")
	})
	if out := b.OutputSince(mark); strings.Contains(out, "out of file descriptors") {
		t.Errorf("the default max.connections let descriptors run out:\n%s", out)
	}
	_, _ = keep.Write(metadataV12(1, []byte("keep"), []byte{0}))
	expectMetadataAnswer(t, "after the flood", keep, 1)
}
