package netloop

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A request that takes longer than RequestReadTimeout to arrive closes
// its connection with a log line, small or large; a connection that sent
// whole requests is left alone. Before, a frame trickling in (or stalled
// after its size) held its connection, its in-flight slot and its buffer
// for as long as the client liked.
func TestStalledRequestTimesOut(t *testing.T) {
	s, logs := startServer(t, Config{RequestReadTimeout: 200 * time.Millisecond}, answerHandler{})
	small := dial(t, s.Addrs()[0])
	small.send(apiVersionsFrame(1)[:7])
	large := dial(t, s.Addrs()[0])
	large.send(produceFrame(2, make([]byte, 4<<20))[:100<<10])
	fine := dial(t, s.Addrs()[0])
	fine.roundTrip(3)

	small.expectClosed()
	large.expectClosed()
	if st := s.Stats(); st.RequestTimeouts != 2 || st.QueuedBytes != 0 {
		t.Fatalf("stats %+v", st)
	}
	if l := logs.lines("did not arrive in full in time"); len(l) != 2 {
		t.Fatalf("log lines %q", l)
	}
	fine.roundTrip(4)
}

// queued.max.request.bytes bounds the large requests being received over
// all connections: one that does not fit waits, unread, until another
// completes, and then arrives whole. Nothing is refused and nothing is
// lost.
func TestQueuedBytesBudget(t *testing.T) {
	const budget = 2 << 20
	h := newHoldHandler()
	s, _ := startServer(t, Config{QueuedMaxRequestBytes: budget}, h)
	records := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 13)
		}
		return b
	}
	first := produceFrame(1, records(budget-4096)) // takes (almost) the whole budget
	second := produceFrame(2, records(1<<20))

	a := dial(t, s.Addrs()[0])
	a.send(first[:len(first)/2])
	if !pollUntil(func() bool { return s.Stats().QueuedBytes == int64(len(first)-4) }) {
		t.Fatalf("the first request holds %d bytes of the budget, want %d", s.Stats().QueuedBytes, len(first)-4)
	}
	b := dial(t, s.Addrs()[0])
	b.send(second[:len(second)/2])
	if !pollUntil(func() bool { return s.Stats().BudgetWaits == 1 }) {
		t.Fatalf("the second request did not wait for the budget: %+v", s.Stats())
	}
	// The rest of the second one is sent too, and stays in the kernel.
	go func() { _, _ = b.Write(second[len(second)/2:]) }()

	a.send(first[len(first)/2:])
	for range 2 {
		req := h.next(t)
		want := map[int32]int{1: budget - 4096, 2: 1 << 20}[req.Header.CorrelationID]
		got := len(req.Body.(*kmsg.ProduceRequest).Topics[0].Partitions[0].Records)
		if got != want {
			t.Fatalf("request %d carries %d record bytes, want %d", req.Header.CorrelationID, got, want)
		}
		req.Reply(corrOnly(req.Header.CorrelationID))
	}
	if corr, _ := a.recv(); corr != 1 {
		t.Fatalf("correlation id %d", corr)
	}
	if corr, _ := b.recv(); corr != 2 {
		t.Fatalf("correlation id %d", corr)
	}
	if st := s.Stats(); st.QueuedBytes != 0 {
		t.Fatalf("%d bytes of the budget held after both completed", st.QueuedBytes)
	}
}
