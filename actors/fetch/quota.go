package fetch

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// throttleFetch counts a consumer's answer against its
// consumer_byte_rate (the record bytes it would carry) and returns the
// throttle it is due: the longer of that quota's and of its
// request_percentage's, as Kafka's handleFetchRequest takes the larger.
// A throttled answer is sent empty (answerThrottled), so its bytes are
// taken back from the rate, as Kafka un-records them.
func throttleFetch(svc *Service, q *quota.Manager, req *wire.Request, o *fetchOp) time.Duration {
	var n int64
	for i := range o.outs {
		n += o.outs[i].bytes
	}
	principal, client, now := req.Session.Principal(), req.Header.ClientID, svc.env.Now()
	d := q.Record(quota.Fetch, principal, client, float64(n), now)
	d = max(d, q.Pending(quota.Request, principal, client, now))
	if d > 0 {
		q.Unrecord(quota.Fetch, principal, client, float64(n), now)
	}
	return d
}

// answerThrottled answers a throttled fetch as Kafka's
// getThrottledResponse does (KIP-219): no partitions, the throttle time,
// and the connection held for it once written. An incremental session
// keeps its id and state (the partitions are sent again later); a full
// fetch's new session is dropped, as Kafka creates none for a throttled
// answer (session id 0: the client fetches in full again).
func answerThrottled(svc *Service, req *wire.Request, kreq *kmsg.FetchRequest, fc *fetchContext, o *fetchOp, d time.Duration) {
	o.releaseAll()
	sid := fc.sessionID
	if sid != 0 && !fc.incremental {
		svc.sessions.drop(sid)
		sid = 0
	}
	resp := &wire.FetchResponse{Version: kreq.Version, SessionID: sid, ThrottleMillis: env.ThrottleMillis(d)}
	out, err := wire.EncodeFetchResponse(req.Header.CorrelationID, resp)
	if err != nil {
		svc.env.Log.Error("throttled fetch response cannot be encoded", "err", err, "client", req.ClientAddr)
		replyFetchError(svc, req, kreq, kerr.UnknownServerError)
		return
	}
	out.MuteFor = d
	req.Reply(out)
}
