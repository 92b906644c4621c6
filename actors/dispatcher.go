package actors

import (
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// Dispatcher settings of every actor: protoactor's default throughput,
// and enough parked workers for the mailboxes one burst of requests makes
// busy at once (a few per partition touched) without keeping many idle
// stacks.
const (
	mailboxThroughput = 300
	maxParkedWorkers  = 64
)

// workerDispatcher runs actor mailboxes on long-lived worker goroutines.
//
// protoactor's default dispatcher starts a new goroutine each time an idle
// mailbox gets a message. On the request path (a produce or fetch touches
// the router's target partition actors, each of which goes idle between
// requests) that is several goroutines per request, each starting on a
// small stack that then grows by copying as the actor calls into the
// segment and the wire encoders: under many small requests the profile
// showed stack copying and goroutine creation near 10% of the broker's
// CPU. A worker keeps its grown stack: when it has drained a mailbox it
// waits for the next one to schedule instead of exiting.
//
// Scheduling never blocks and never waits for a worker: a mailbox goes
// to a parked worker if one is waiting at that instant, else to a new
// one. So a mailbox that blocks (an actor waiting on a disk) cannot hold
// up any other, exactly as with a goroutine per run. At most maxParked
// workers wait at once; one finding the limit reached exits.
type workerDispatcher struct {
	throughput int
	maxParked  int32
	parked     atomic.Int32
	work       chan func() // unbuffered: a send succeeds only into a parked worker
	stopped    chan struct{}
	stopOnce   sync.Once
}

var _ actor.Dispatcher = (*workerDispatcher)(nil)

// newWorkerDispatcher returns a dispatcher that processes up to
// throughput messages of a mailbox before yielding, with at most
// maxParked idle workers.
func newWorkerDispatcher(throughput, maxParked int) *workerDispatcher {
	return &workerDispatcher{throughput: throughput, maxParked: int32(maxParked),
		work: make(chan func()), stopped: make(chan struct{})}
}

// stop lets the parked workers exit, and those still running exit when
// done. Mailboxes scheduled later still run, each on a goroutine of its
// own.
func (d *workerDispatcher) stop() { d.stopOnce.Do(func() { close(d.stopped) }) }

// Schedule implements actor.Dispatcher.
func (d *workerDispatcher) Schedule(run func()) {
	select {
	case d.work <- run:
	default:
		go d.worker(run)
	}
}

// park counts the worker among the parked ones, or reports that the
// limit is reached and it is to exit. A compare-and-swap, so the count
// never passes the limit even for an instant (an add-then-undo would, and
// a reader could see it).
func (d *workerDispatcher) park() bool {
	for {
		p := d.parked.Load()
		if p >= d.maxParked {
			return false
		}
		if d.parked.CompareAndSwap(p, p+1) {
			return true
		}
	}
}

// Throughput implements actor.Dispatcher.
func (d *workerDispatcher) Throughput() int { return d.throughput }

func (d *workerDispatcher) worker(run func()) {
	for {
		run()
		if !d.park() {
			return
		}
		select {
		case run = <-d.work:
			d.parked.Add(-1)
		case <-d.stopped:
			d.parked.Add(-1)
			return
		}
	}
}
