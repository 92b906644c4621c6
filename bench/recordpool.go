package bench

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordPool recycles produced records and their values. A record
// carries the time it was meant to be sent: in the first 8 bytes of its
// value when the value has room (as every consumer of the benchmark reads
// it), else in the pool's side table.
//
// One goroutine gets records (the producer's loop) and the client's
// promises put them back. Put appends to a shared list under a lock that
// nobody else wants; get takes from its own list and swaps the two only
// when its own is empty, so the records cross between the goroutines in
// bulk. (A sync.Pool moved them one at a time between per-CPU caches,
// stealing on nearly every get.)
type recordPool struct {
	size int
	free []*kgo.Record // get's own; only the getting goroutine touches it

	mu       sync.Mutex
	returned []*kgo.Record
	sent     map[*kgo.Record]time.Time // only for values shorter than 8 bytes
}

func newRecordPool(valueSize int) *recordPool {
	p := &recordPool{size: valueSize}
	if valueSize < 8 {
		p.sent = make(map[*kgo.Record]time.Time)
	}
	return p
}

// get returns a record sent at intended. A timed record carries intended
// for the latency measurement (sentAt); an untimed one carries zero in
// its value's first 8 bytes and is not measured.
func (p *recordPool) get(intended time.Time, timed bool) *kgo.Record {
	if len(p.free) == 0 {
		p.mu.Lock()
		p.free, p.returned = p.returned, p.free
		p.mu.Unlock()
	}
	var r *kgo.Record
	if n := len(p.free); n > 0 {
		r = p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	} else {
		r = &kgo.Record{Value: make([]byte, p.size)}
	}
	r.Value = r.Value[:p.size]
	switch {
	case !timed:
		if p.sent == nil {
			clear(r.Value[:8])
		}
	case p.sent != nil:
		p.mu.Lock()
		p.sent[r] = intended
		p.mu.Unlock()
	default:
		payload(r.Value, intended)
	}
	// The record's timestamp is its send time (for an untimed record the
	// last time read), as the client would set it, without the client
	// reading the clock again.
	r.Timestamp = intended
	return r
}

// put takes back a record whose promise has run.
func (p *recordPool) put(r *kgo.Record) {
	*r = kgo.Record{Value: r.Value[:p.size]}
	p.mu.Lock()
	if p.sent != nil {
		delete(p.sent, r)
	}
	p.returned = append(p.returned, r)
	p.mu.Unlock()
}

// sentAt is when a timed record was meant to be sent, and false for an
// untimed one; only valid before put.
func (p *recordPool) sentAt(r *kgo.Record) (time.Time, bool) {
	if p.sent == nil {
		nanos := int64(binary.BigEndian.Uint64(r.Value))
		return time.Unix(0, nanos), nanos != 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.sent[r]
	return t, ok
}
