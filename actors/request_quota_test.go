package actors

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// metadataAnswer is an encoded Metadata v12 answer with throttle ms.
func metadataAnswer(ms int32) *wire.Response {
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version, resp.ThrottleMillis = 12, ms
	return &wire.Response{Chunks: []wire.Chunk{{Bytes: wire.AppendResponse(nil, 7, resp)}}}
}

// throttleOf decodes an answer of metadataAnswer's form.
func throttleOf(t *testing.T, r *wire.Response) int32 {
	t.Helper()
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	b := r.Chunks[0].Bytes
	if err := resp.ReadFrom(b[9:]); err != nil {
		t.Fatal(err)
	}
	return resp.ThrottleMillis
}

// A reply given while the handler runs waits for the measured throttle;
// one given after it carries the throttle at once, in its mute and in
// its throttle_time_ms (unless it already says more); a nil reply (no
// response) and an answer without bytes (an acks=0 produce's mute) pass
// unchanged.
func TestMeteredReply(t *testing.T) {
	var got []*wire.Response
	key, version := int16(kmsg.Metadata), int16(12)
	m := &meteredReply{reply: func(r *wire.Response) { got = append(got, r) }, key: key, version: version}
	m.deliver(metadataAnswer(0))
	if len(got) != 0 {
		t.Fatal("a reply went on before the handler's time was measured")
	}
	m.handled(time.Second)
	if len(got) != 1 || got[0].MuteFor != time.Second || throttleOf(t, got[0]) != 1000 {
		t.Fatalf("held reply: %+v", got)
	}

	got = nil
	m = &meteredReply{reply: func(r *wire.Response) { got = append(got, r) }, key: key, version: version}
	m.handled(2 * time.Second)
	late := metadataAnswer(3000)
	late.MuteFor = 3 * time.Second
	m.deliver(late)
	m.deliver(nil)
	silent := &wire.Response{MuteFor: time.Millisecond}
	m.deliver(silent)
	if len(got) != 3 || got[0].MuteFor != 3*time.Second || throttleOf(t, got[0]) != 3000 || got[1] != nil || got[2].MuteFor != time.Millisecond {
		t.Fatalf("late replies: %+v", got)
	}
}
