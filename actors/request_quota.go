package actors

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/api"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/wire"
)

// handleMetered serves req while client quotas are set: it measures the
// time the request's handler takes on the gnet loop (decoding is done
// by then; the actors' work for it is not counted: it runs elsewhere,
// shared among all clients) and records it against the client's
// request_percentage, as a share of one thread (Kafka's unit). A client
// over its share has its connection held for the throttle time once
// this response is written, and the response says so: its
// throttle_time_ms is raised to the throttle, as Kafka's
// sendResponseMaybeThrottle reports it (raiseThrottle).
func (b *Broker) handleMetered(a api.API, req *wire.Request, q *quota.Manager) {
	m := &meteredReply{reply: req.Reply, key: req.Header.APIKey, version: req.Header.APIVersion}
	req.Reply = m.deliver
	start := time.Now()
	a.Handle(b.services, req)
	now := time.Now()
	d := q.Record(quota.Request, req.Session.Principal(), req.Header.ClientID, now.Sub(start).Seconds()*100, now)
	m.handled(d)
}

// meteredReply holds a response the handler gave before its time was
// measured, and hands it on with the throttle once it is.
type meteredReply struct {
	reply        func(*wire.Response)
	key, version int16

	mu       sync.Mutex
	done     bool          // the handler returned and the throttle is known
	throttle time.Duration // of this request
	held     *wire.Response
	heldSet  bool
}

func (m *meteredReply) deliver(r *wire.Response) {
	m.mu.Lock()
	if !m.done && !m.heldSet { // a second reply goes on, for netloop to report
		m.held, m.heldSet = r, true
		m.mu.Unlock()
		return
	}
	d := m.throttle
	m.mu.Unlock()
	m.send(r, d)
}

func (m *meteredReply) handled(d time.Duration) {
	m.mu.Lock()
	m.done, m.throttle = true, d
	r, ok := m.held, m.heldSet
	m.held = nil
	m.mu.Unlock()
	if ok {
		m.send(r, d)
	}
}

// send hands r on with the request's throttle: an answer (not an acks=0
// produce's silence, which Kafka exempts from request quotas) is muted
// for it and reports it.
func (m *meteredReply) send(r *wire.Response, d time.Duration) {
	if r != nil && len(r.Chunks) > 0 && d > r.MuteFor {
		r.MuteFor = d
		raiseThrottle(r, m.key, m.version, d)
	}
	m.reply(r)
}

// raiseThrottle re-encodes r, an encoded answer to a request of key and
// version, with its throttle_time_ms raised to d, when its API and
// version have the field. Only single-buffer answers that own their
// bytes are re-encoded (a fetch's file regions are not: a fetch answers
// its request throttle itself, empty); it runs only for a throttled
// client, so the decode is off the common path.
func raiseThrottle(r *wire.Response, key, version int16, d time.Duration) {
	if len(r.Chunks) != 1 || r.Chunks[0].File != nil || r.Done != nil {
		return
	}
	body := kmsg.ResponseForKey(key)
	t, ok := body.(kmsg.ThrottleResponse)
	if body == nil || !ok {
		return
	}
	set, ok := body.(kmsg.SetThrottleResponse)
	if !ok {
		return
	}
	body.SetVersion(version)
	b := r.Chunks[0].Bytes
	off := 8 // size, correlation id
	if body.IsFlexible() && key != int16(kmsg.ApiVersions) {
		off++ // the empty header tags
	}
	if len(b) < off || body.ReadFrom(b[off:]) != nil {
		return
	}
	ms := env.ThrottleMillis(d)
	if cur, _ := t.Throttle(); cur >= ms {
		return
	}
	set.SetThrottle(ms)
	r.Chunks[0].Bytes = wire.AppendResponse(nil, int32(binary.BigEndian.Uint32(b[4:])), body)
}
