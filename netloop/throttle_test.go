package netloop

import (
	"crypto/tls"
	"testing"
	"time"
)

// A response with MuteFor holds back the connection's next request until
// the mute is over (counted from the write), then decoding resumes by
// itself; on gnet and TLS listeners alike.
func TestMuteForAfterResponse(t *testing.T) {
	t.Run("gnet", func(t *testing.T) {
		h := newHoldHandler()
		s, _ := startServer(t, Config{}, h)
		checkMuteFor(t, h, dial(t, s.Addrs()[0]))
	})
	t.Run("tls", func(t *testing.T) {
		f := newTLSFixture(t)
		h := newHoldHandler()
		s, _ := startServer(t, f.tlsConfig(Config{}, tls.NoClientCert), h)
		checkMuteFor(t, h, f.dial(t, s.Addrs()[0], nil))
	})
}

func checkMuteFor(t *testing.T, h *holdHandler, c *client) {
	const mute = 300 * time.Millisecond
	c.send(apiVersionsFrame(1))
	r := corrOnly(1)
	r.MuteFor = mute
	h.next(t).Reply(r)
	if corr, _ := c.recv(); corr != 1 {
		t.Fatalf("correlation id %d, want 1", corr)
	}
	received := time.Now()
	c.send(apiVersionsFrame(2))
	second := h.next(t)
	// The mute began before the response reached the client, so the
	// wait seen from here is a little shorter than mute, never near 0.
	if waited := time.Since(received); waited < mute*2/3 {
		t.Fatalf("second request decoded %v after the throttled response, want about %v", waited, mute)
	}
	second.Reply(corrOnly(2))
	if corr, _ := c.recv(); corr != 2 {
		t.Fatalf("correlation id %d, want 2", corr)
	}
	// No mute asked: the next request is not held (a stale throttle
	// would hold it a whole mute).
	c.send(apiVersionsFrame(3))
	start := time.Now()
	h.next(t).Reply(corrOnly(3))
	if d := time.Since(start); d >= mute {
		t.Fatalf("unthrottled request waited %v", d)
	}
	c.recv()
}
