package actors

import (
	"sync"
	"time"

	"github.com/samsa-io/samsa/actors/api"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/wire"
)

// handleMetered serves req while client quotas are set: it measures the
// time the request's handler takes on the gnet loop (decoding is done
// by then; the actors' work for it is not counted: it runs elsewhere,
// shared among all clients) and records it against the client's
// request_percentage, as a share of one thread (Kafka's unit). A client
// over its share has its connection held for the throttle time once
// this response is written; the response itself is not re-encoded, so
// its throttle_time_ms stays as the handler set it.
func (b *Broker) handleMetered(a api.API, req *wire.Request, q *quota.Manager) {
	m := &meteredReply{reply: req.Reply}
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
	reply func(*wire.Response)

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

func (m *meteredReply) send(r *wire.Response, d time.Duration) {
	if r != nil && d > r.MuteFor {
		r.MuteFor = d
	}
	m.reply(r)
}
