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
type recordPool struct {
	size int
	pool sync.Pool
	mu   sync.Mutex
	sent map[*kgo.Record]time.Time // only for values shorter than 8 bytes
}

func newRecordPool(valueSize int) *recordPool {
	p := &recordPool{size: valueSize}
	p.pool.New = func() any { return &kgo.Record{Value: make([]byte, valueSize)} }
	if valueSize < 8 {
		p.sent = make(map[*kgo.Record]time.Time)
	}
	return p
}

// get returns a record whose value is stamped with intended.
func (p *recordPool) get(intended time.Time) *kgo.Record {
	r := p.pool.Get().(*kgo.Record)
	if p.sent != nil {
		p.mu.Lock()
		p.sent[r] = intended
		p.mu.Unlock()
	}
	r.Value = payload(r.Value[:p.size], intended)
	// The record's timestamp is its send time, as the client would set
	// it, without the client reading the clock again.
	r.Timestamp = intended
	return r
}

// put takes back a record whose promise has run.
func (p *recordPool) put(r *kgo.Record) {
	if p.sent != nil {
		p.mu.Lock()
		delete(p.sent, r)
		p.mu.Unlock()
	}
	*r = kgo.Record{Value: r.Value[:p.size]}
	p.pool.Put(r)
}

// sentAt is when r was meant to be sent; only valid before put.
func (p *recordPool) sentAt(r *kgo.Record) time.Time {
	if p.sent == nil {
		return time.Unix(0, int64(binary.BigEndian.Uint64(r.Value)))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent[r]
}
