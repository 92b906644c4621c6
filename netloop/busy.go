package netloop

import (
	"runtime"
	"time"
)

// Busy time is how long the event loops spent serving connections'
// traffic (OnTraffic: reading, decoding, handing requests to the
// Handler, which never blocks), as opposed to waiting in epoll. Each
// connection sums its own in a counter only its loop writes, so the hot
// path pays two monotonic clock reads and one uncontended atomic add per
// wake-up; a closing connection folds its sum into the server's under the
// lock that also removes it from s.conns, so a scrape (LoopBusy) never
// counts it twice nor loses it. TLS connections are read by goroutines of
// their own (tlsconn.go) and are not part of it.

// LoopBusy is the total time the event loops have spent serving traffic
// since Start, read for a metrics scrape (it walks the connections under
// the server's lock).
func (s *Server) LoopBusy() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	busy := s.busyClosed
	for c := range s.conns {
		busy += c.busy.Load()
	}
	return time.Duration(busy)
}

// EventLoops is the number of gnet event loops the server runs (the
// denominator of the loops' busy ratio).
func (s *Server) EventLoops() int {
	if s.cfg.EventLoops > 0 {
		return s.cfg.EventLoops
	}
	return runtime.NumCPU() // gnet's default with multicore
}

// addBusy adds the time since start to c's busy sum; called by its loop.
func (c *conn) addBusy(start time.Time) {
	c.busy.Add(int64(time.Since(start)))
}
