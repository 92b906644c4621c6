package netloop

import (
	"testing"

	"github.com/samsa-io/samsa/wire"
)

// A response marked CloseAfter closes the connection once it and every
// earlier response are written; a later request's response, even one
// filed first, is never sent.
func TestCloseAfterResponse(t *testing.T) {
	h := newHoldHandler()
	s, _ := startServer(t, Config{}, h)
	c := dial(t, s.Addrs()[0])
	c.send(apiVersionsFrame(1), apiVersionsFrame(2), apiVersionsFrame(3))
	r1, r2, r3 := h.next(t), h.next(t), h.next(t)
	r3.Reply(corrOnly(3))
	r2.Reply(&wire.Response{CloseAfter: true})
	r1.Reply(corrOnly(1))
	if corr, _ := c.recv(); corr != 1 {
		t.Fatalf("first response has correlation id %d, want 1", corr)
	}
	c.expectClosed()
	st := stopped(t, s)
	if st.Responses != 2 || st.RepliesDropped != 1 {
		t.Fatalf("responses %d (want 1 written and the close), dropped %d (want 1): %+v", st.Responses, st.RepliesDropped, st)
	}
}
