package bench

import (
	"sync"
	"sync/atomic"
)

// outstanding waits until a number of operations, known only once the
// last has started, have finished. Unlike a sync.WaitGroup the starting
// side touches nothing shared per operation: only finishing ones count,
// and they take the lock only once the total is known and reached.
type outstanding struct {
	finished atomic.Int64
	target   atomic.Int64 // the total plus one; 0 until wait names it
	mu       sync.Mutex
	waiting  chan struct{}
}

// done records one finished operation.
func (o *outstanding) done() {
	n := o.finished.Add(1)
	if t := o.target.Load(); t == 0 || n < t-1 {
		return
	}
	o.mu.Lock()
	if o.waiting != nil {
		close(o.waiting)
		o.waiting = nil
	}
	o.mu.Unlock()
}

// wait returns once total operations have finished. It is called once.
func (o *outstanding) wait(total int64) {
	ch := make(chan struct{})
	o.mu.Lock()
	o.waiting = ch
	o.target.Store(total + 1)
	// A done that counted the last operation before the store above saw
	// no target; this check covers it.
	if o.finished.Load() >= total {
		close(ch)
		o.waiting = nil
	}
	o.mu.Unlock()
	<-ch
}
