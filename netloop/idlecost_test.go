package netloop

import (
	"os"
	"runtime"
	"testing"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(ents)
}

// Idle connections cost memory only: once answered, a connection keeps no
// goroutine of its own and one descriptor (gnet's). With a writer
// goroutine and a dup per connection, 5,000 idle clients had the garbage
// collector scanning 5,000 stacks on every cycle and used 10,000
// descriptors.
func TestIdleConnectionsCostNoGoroutineAndOneDescriptor(t *testing.T) {
	const n = 200
	s, _ := startServer(t, Config{}, answerHandler{})
	addr := s.Addrs()[0]
	// Settle what the server started on its own before counting.
	dial(t, addr).roundTrip(0)
	runtime.GC()
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)

	clients := make([]*client, n)
	for i := range clients {
		clients[i] = dial(t, addr)
		clients[i].roundTrip(int32(i + 1))
	}
	// A response that the fast path could not write starts a writer; it
	// exits once it has nothing more to write.
	if !pollUntil(func() bool { return runtime.NumGoroutine()-baseG < n/10 }) {
		t.Errorf("%d idle connections hold %d goroutines; want (almost) none", n, runtime.NumGoroutine()-baseG)
	}
	// Each connection is one descriptor here (the client's end) and one in
	// the server.
	if got := openFDs(t) - baseFD; got > 2*n+n/10 {
		t.Errorf("%d idle connections hold %d descriptors (both ends); want about %d", n, got, 2*n)
	}
	// They all still serve.
	for i, c := range clients {
		c.roundTrip(int32(n + i))
	}
}
