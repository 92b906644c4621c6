package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// amendReply makes the request's answer pass through amend before it
// leaves: the encoded response is decoded, amended and encoded again.
// It is how the authorizer puts back the parts of a request it kept from
// the actor that serves the rest (denied topics, answered
// TOPIC_AUTHORIZATION_FAILED) without that actor knowing of ACLs. Only
// requests with something to amend pay for it, and only with an
// authorizer. A response that cannot be read back goes out unchanged.
func amendReply(req *wire.Request, amend func(kmsg.Response)) {
	reply := req.Reply
	req.Reply = func(r *wire.Response) {
		if r == nil || len(r.Chunks) != 1 || r.Chunks[0].File != nil {
			reply(r)
			return
		}
		resp := req.Body.ResponseKind()
		resp.SetVersion(req.Body.GetVersion())
		off := 8 // size, correlation id
		if resp.IsFlexible() && resp.Key() != wire.KeyApiVersions {
			off++ // the header's empty tag buffer
		}
		b := r.Chunks[0].Bytes
		if len(b) < off || resp.ReadFrom(b[off:]) != nil {
			reply(r)
			return
		}
		amend(resp)
		out := *r
		out.Chunks = []wire.Chunk{{Bytes: wire.AppendResponse(nil, req.Header.CorrelationID, resp)}}
		reply(&out)
	}
}

// splitBy splits items into those keep accepts and the others, in order.
func splitBy[T any](items []T, keep func(*T) bool) (kept, dropped []T) {
	kept = make([]T, 0, len(items))
	for i := range items {
		if keep(&items[i]) {
			kept = append(kept, items[i])
		} else {
			dropped = append(dropped, items[i])
		}
	}
	return kept, dropped
}
