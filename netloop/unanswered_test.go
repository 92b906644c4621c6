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
	s, logs := startServer(t, Config{UnansweredAfter: 50 * time.Millisecond}, h)
	c := dial(t, s.Addrs()[0])
	c.send(apiVersionsFrame(1), apiVersionsFrame(2))
	answered, forgotten := h.next(t), h.next(t)
	answered.Reply(answer(answered))
	if !pollUntil(func() bool { return s.Stats().Unanswered >= 1 }) {
		t.Fatalf("a request left without an answer was never reported: %+v", s.Stats())
	}
	lines := logs.lines("no answer for too long", "requests=1")
	if len(lines) != 1 {
		t.Fatalf("log lines about the forgotten request: %q", lines)
	}
	// Answering it late still works, and nothing more is reported.
	forgotten.Reply(answer(forgotten))
	for _, want := range []int32{1, 2} {
		if got, _ := c.recv(); got != want {
			t.Fatalf("correlation %d, want %d", got, want)
		}
	}
	if n := s.Stats().Unanswered; n != 1 {
		t.Fatalf("%d requests reported, want the one", n)
	}
}
