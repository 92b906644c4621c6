package netloop

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire"
)

// The loops' busy time grows with the traffic they serve, stays within
// the wall time the loops have run, and is kept when the connections
// that earned it close. Requests carry the time they were decoded.
func TestLoopBusyFollowsTraffic(t *testing.T) {
	started := time.Now()
	decoded := make(chan time.Time, 16)
	s, _ := startServer(t, Config{}, handlerFunc(func(req *wire.Request) {
		decoded <- req.Decoded
		req.Reply(answer(req))
	}))
	if s.LoopBusy() != 0 {
		t.Fatalf("busy %v before any traffic", s.LoopBusy())
	}
	c := dial(t, s.Addrs()[0])
	for i := int32(1); i <= 5; i++ {
		c.roundTrip(i)
		if at := <-decoded; at.Before(started) || at.After(time.Now()) {
			t.Fatalf("request %d decoded at %v, outside the test's run (from %v)", i, at, started)
		}
	}
	busy := s.LoopBusy()
	if busy <= 0 {
		t.Fatalf("busy %v after 5 round trips", busy)
	}
	if most := time.Since(started) * time.Duration(s.EventLoops()); busy > most {
		t.Fatalf("busy %v, more than %d loops could spend since the start (%v)", busy, s.EventLoops(), most)
	}
	_ = c.Close()
	stopped(t, s)
	if after := s.LoopBusy(); after < busy {
		t.Fatalf("busy went from %v to %v as the connection closed", busy, after)
	}
}
