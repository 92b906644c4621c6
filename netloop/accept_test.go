package netloop

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// Event loops that stop on their own (here one loop is told to shut down,
// as a gnet error would end it) make the server report it through
// Failed, so that its process exits instead of lingering with a port that
// serves nothing. Before, gnet's engine stopped, a line was logged, and
// the process lived on.
func TestFailedWhenTheLoopsStop(t *testing.T) {
	s, logs := newServer(t, Config{EventLoops: 1}, answerHandler{})
	s.enrollStuck = 200 * time.Millisecond
	var kill atomic.Bool
	s.hooks.trafficAction = func() (gnet.Action, bool) {
		if kill.Load() {
			return gnet.Shutdown, true
		}
		return gnet.None, false
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)
	c := dial(t, s.Addrs()[0])
	c.roundTrip(1)
	if s.Err() != nil {
		t.Fatalf("Err %v while serving", s.Err())
	}
	kill.Store(true)
	c.send(apiVersionsFrame(2)) // the loop exits on it
	c.expectClosed()
	// A new connection waits for a loop that is gone.
	late, err := net.DialTimeout("tcp", s.Addrs()[0].String(), testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	waitSignal(t, s.Failed(), "Failed")
	if s.Err() == nil || len(logs.lines("the server stopped serving")) != 1 {
		t.Fatalf("Err %v, log lines %q", s.Err(), logs.lines("stopped serving"))
	}
}
