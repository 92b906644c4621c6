package netloop

import (
	"testing"
	"time"
)

// A request the handler never answers is found by the sweep once it is
// older than UnansweredAfter, logged as an error once and counted; one
// answered in time is not, and neither is the forgotten one a second
// time.
func TestUnansweredRequestsAreReported(t *testing.T) {
	h := newHoldHandler()
	// The cutoff is generous so that the request answered at once is never
	// old enough to count, however slow the machine; the forgotten one is
	// sent only after the first has been answered, so the report can only
	// be about it.
	s, logs := startServer(t, Config{UnansweredAfter: 500 * time.Millisecond}, h)
	c := dial(t, s.Addrs()[0])
	c.send(apiVersionsFrame(1))
	answered := h.next(t)
	answered.Reply(answer(answered))
	if got, _ := c.recv(); got != 1 {
		t.Fatalf("correlation %d, want 1", got)
	}
	c.send(apiVersionsFrame(2))
	forgotten := h.next(t)
	if !pollUntil(func() bool { return s.Stats().Unanswered >= 1 }) {
		t.Fatalf("a request left without an answer was never reported: %+v", s.Stats())
	}
	lines := logs.lines("no answer for too long", "requests=1")
	if len(lines) != 1 {
		t.Fatalf("log lines about the forgotten request: %q", lines)
	}
	// Answering it late still works, and nothing more is reported.
	forgotten.Reply(answer(forgotten))
	if got, _ := c.recv(); got != 2 {
		t.Fatalf("correlation %d, want 2", got)
	}
	if n := s.Stats().Unanswered; n != 1 {
		t.Fatalf("%d requests reported, want the one", n)
	}
}
