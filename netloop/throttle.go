package netloop

import (
	"time"

	"github.com/samsa-io/samsa/wire"
)

// throttle is a connection's quota mute (wire.Response.MuteFor): from
// the moment such a response is filed until MuteFor after it is written,
// the connection's requests are not decoded, gnet or TLS alike. Holding
// them from the filing on closes the race where the client reads the
// response and sends its next request before the writer has recorded
// the write. It lives under the connection's mutex; an unthrottled
// connection pays one comparison per admitted frame and per response.
type throttle struct {
	pending int   // responses with MuteFor filed and not yet written
	until   int64 // unix nanoseconds; 0: no mute running
	armed   bool  // a timer will call the connection's endThrottle
}

// filedLocked notes a response filed for writing.
func (t *throttle) filedLocked(r *wire.Response) {
	if r != nil && r.MuteFor > 0 {
		t.pending++
	}
}

// writtenLocked notes a batch written (or dropped: written false) and
// starts or lengthens the mute its responses ask for, from now.
func (t *throttle) writtenLocked(batch []*wire.Response, written bool) {
	var d time.Duration
	for _, r := range batch {
		if r != nil && r.MuteFor > 0 {
			t.pending--
			d = max(d, r.MuteFor)
		}
	}
	if d > 0 && written {
		t.until = max(t.until, time.Now().Add(d).UnixNano())
	}
}

// activeLocked reports whether the mute still holds; if it does, it makes
// sure a timer calls end when it is over, which resumes decoding.
func (t *throttle) activeLocked(end func()) bool {
	if t.pending > 0 {
		return true // the writer's writtenLocked starts the timed part
	}
	if t.until == 0 {
		return false
	}
	left := time.Duration(t.until - time.Now().UnixNano())
	if left <= 0 {
		t.until = 0
		return false
	}
	if !t.armed {
		t.armed = true
		time.AfterFunc(left, end)
	}
	return true
}

// endThrottle runs when a gnet connection's mute may be over: if the
// loop stopped decoding it and nothing else holds it back, wake the loop
// (as a writer that drained does).
func (c *conn) endThrottle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.throttle.armed = false
	if c.muted && !c.closed && c.inFlight < len(c.slots) && c.outbound < c.srv.cfg.MaxOutboundBytes && !c.throttle.activeLocked(c.endThrottle) {
		c.muted = false
		_ = c.gc.Wake(nil)
	}
}

// endThrottle wakes a TLS connection's reader, which rechecks its bounds.
func (c *tlsConn) endThrottle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.throttle.armed = false
	c.cond.Broadcast()
}
