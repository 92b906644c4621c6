package env

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// ReplyThrottled answers req with resp, telling the client to wait d
// (throttle_time_ms) and holding the connection's next requests for d
// once the answer is written (KIP-219). resp's throttle field is set
// here; d of zero is Reply.
func ReplyThrottled(req *wire.Request, resp kmsg.Response, d time.Duration) {
	if d <= 0 {
		Reply(req, resp)
		return
	}
	if t, ok := resp.(kmsg.SetThrottleResponse); ok {
		t.SetThrottle(ThrottleMillis(d))
	}
	b := wire.AppendResponse(nil, req.Header.CorrelationID, resp)
	req.Reply(&wire.Response{Chunks: []wire.Chunk{{Bytes: b}}, MuteFor: d})
}

// ThrottleMillis is d as throttle_time_ms, rounded up so a throttle is
// never reported as 0.
func ThrottleMillis(d time.Duration) int32 {
	return int32((d + time.Millisecond - 1) / time.Millisecond)
}
