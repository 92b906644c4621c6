package actors

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire"
)

// A reply given while the handler runs waits for the measured throttle;
// one given after it carries the throttle at once; a nil reply (no
// response) passes unchanged.
func TestMeteredReply(t *testing.T) {
	var got []*wire.Response
	m := &meteredReply{reply: func(r *wire.Response) { got = append(got, r) }}
	early := &wire.Response{}
	m.deliver(early)
	if len(got) != 0 {
		t.Fatal("a reply went on before the handler's time was measured")
	}
	m.handled(time.Second)
	if len(got) != 1 || got[0].MuteFor != time.Second {
		t.Fatalf("held reply: %+v", got)
	}

	got = nil
	m = &meteredReply{reply: func(r *wire.Response) { got = append(got, r) }}
	m.handled(2 * time.Second)
	late := &wire.Response{MuteFor: 3 * time.Second}
	m.deliver(late)
	m.deliver(nil)
	if len(got) != 2 || got[0].MuteFor != 3*time.Second || got[1] != nil {
		t.Fatalf("late replies: %+v", got)
	}
}
