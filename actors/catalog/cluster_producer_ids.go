package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Producer ids in cluster mode, as Kafka 3.9's RPCProducerIdManager: the
// controller allocates blocks cluster-wide (/latest_producer_id_block),
// each broker asks it for one with AllocateProducerIds (67) and hands ids
// out of it, asking for the next block once 90% of the current one is
// used, so InitProducerId rarely waits. A request that finds no id waits
// for the block (Kafka answers COORDINATOR_LOAD_IN_PROGRESS at once and
// the client retries; waiting spares it the round trips) and is answered
// COORDINATOR_LOAD_IN_PROGRESS only if none arrives within
// producerIDWait. Requests to the controller are retried with back-off
// on NOT_CONTROLLER, a stale broker epoch or a lost connection, each
// time to the controller the cluster view names then. No block outlives
// the broker: a restart asks for a new one, so ids are never handed out
// twice.

const (
	// producerIDPrefetch is Kafka's PidPrefetchThreshold.
	producerIDPrefetch = 0.90
	// producerIDWait bounds how long an InitProducerId waits for a block.
	producerIDWait = 5 * time.Second
)

// idBlock is a block of ids, [next, end).
type idBlock struct{ next, end int64 }

func (b idBlock) empty() bool { return b.next >= b.end }

// clusterProducerIDs hands out ids from controller-allocated blocks. Safe
// for concurrent use: the metadata actor takes ids, the fetching
// goroutine installs blocks. It never blocks its callers.
type clusterProducerIDs struct {
	// fetch asks the controller for a block (blocking; retried by the
	// caller on error).
	fetch func(ctx context.Context) (start int64, length int32, err error)
	log   *slog.Logger
	stop  <-chan struct{}
	wait  time.Duration // producerIDWait; tests shorten it
	retry backoff

	mu       sync.Mutex
	cur      idBlock
	prefetch int64    // once cur.next reaches it, the next block is asked for
	ahead    *idBlock // the next block, fetched ahead
	fetching bool
	waiters  []*pidWaiter
}

// pidWaiter is an InitProducerId waiting for a block.
type pidWaiter struct {
	done     func(id int64, code kerr.Code)
	answered bool // under clusterProducerIDs.mu
	timer    *time.Timer
}

func newClusterProducerIDs(fetch func(context.Context) (int64, int32, error), log *slog.Logger, stop <-chan struct{}) *clusterProducerIDs {
	return &clusterProducerIDs{fetch: fetch, log: log, stop: stop, wait: producerIDWait,
		retry: backoff{min: 100 * time.Millisecond, max: 2 * time.Second}}
}

// take calls done with a new id: at once, on the caller's goroutine,
// when the current block has one, else once a block arrives (on the
// fetching goroutine) or with COORDINATOR_LOAD_IN_PROGRESS after the
// wait.
func (p *clusterProducerIDs) take(done func(id int64, code kerr.Code)) {
	p.mu.Lock()
	if id, ok := p.nextLocked(); ok {
		p.mu.Unlock()
		done(id, kerr.None)
		return
	}
	w := &pidWaiter{done: done}
	p.waiters = append(p.waiters, w)
	p.startFetchLocked()
	w.timer = time.AfterFunc(p.wait, func() { p.expire(w) })
	p.mu.Unlock()
}

// nextLocked takes the next id, moving to the block fetched ahead when
// the current one is used up, and asks for a further block past the
// prefetch point.
func (p *clusterProducerIDs) nextLocked() (int64, bool) {
	if p.cur.empty() && p.ahead != nil {
		p.install(*p.ahead)
		p.ahead = nil
	}
	if p.cur.empty() {
		return 0, false
	}
	id := p.cur.next
	p.cur.next++
	if p.cur.next >= p.prefetch && p.ahead == nil {
		p.startFetchLocked()
	}
	return id, true
}

func (p *clusterProducerIDs) install(b idBlock) {
	p.cur = b
	p.prefetch = b.next + int64(float64(b.end-b.next)*producerIDPrefetch)
}

func (p *clusterProducerIDs) startFetchLocked() {
	if p.fetching {
		return
	}
	p.fetching = true
	go p.fetchLoop()
}

// fetchLoop asks for a block until it gets one (or stop), installs it
// and answers the waiters it covers; waiters left over ask again.
func (p *clusterProducerIDs) fetchLoop() {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		go func() {
			select {
			case <-p.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		start, n, err := p.fetch(ctx)
		cancel()
		if err == nil && (start < 0 || n <= 0) {
			err = fmt.Errorf("the controller gave an empty block (start %d, length %d)", start, n)
		}
		if err != nil {
			p.log.Warn("cannot get a block of producer ids from the controller; retrying", "err", err)
			if !p.retry.sleep(p.stop) {
				p.mu.Lock()
				p.fetching = false
				p.mu.Unlock()
				return
			}
			continue
		}
		p.retry.reset()
		b := idBlock{next: start, end: start + int64(n)}
		p.log.Info("got a block of producer ids from the controller", "start", b.next, "end", b.end-1)
		type answer struct {
			w  *pidWaiter
			id int64
		}
		var answers []answer
		p.mu.Lock()
		if p.cur.empty() {
			p.install(b)
		} else {
			p.ahead = &b
		}
		for len(p.waiters) > 0 {
			id, ok := p.nextLocked()
			if !ok {
				break
			}
			w := p.waiters[0]
			p.waiters = p.waiters[1:]
			w.answered = true
			w.timer.Stop()
			answers = append(answers, answer{w, id})
		}
		again := len(p.waiters) > 0 || (p.ahead == nil && p.cur.next >= p.prefetch)
		p.fetching = again
		p.mu.Unlock()
		for _, a := range answers {
			a.w.done(a.id, kerr.None)
		}
		if !again {
			return
		}
	}
}

// expire answers a waiter that no block reached in time.
func (p *clusterProducerIDs) expire(w *pidWaiter) {
	p.mu.Lock()
	if w.answered {
		p.mu.Unlock()
		return
	}
	w.answered = true
	for i, x := range p.waiters {
		if x == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	w.done(-1, kerr.CoordinatorLoadInProgress)
}

// errNoController: the view names no live controller yet.
var errNoController = errors.New("no controller known yet")

// allocateFromController is the fetch of a broker: AllocateProducerIds
// to the controller the view names, on the inter-broker listener.
func allocateFromController(client *interbroker.Client, mode *ClusterMode, brokerID int32, listener string) func(context.Context) (int64, int32, error) {
	return func(ctx context.Context) (int64, int32, error) {
		addr, ok := controllerAddr(mode.View.Load(), listener)
		if !ok {
			return 0, 0, errNoController
		}
		req := kmsg.NewPtrAllocateProducerIDsRequest()
		req.BrokerID, req.BrokerEpoch = brokerID, mode.BrokerEpoch.Load()
		resp, err := client.Send(ctx, addr, req)
		if err != nil {
			return 0, 0, err
		}
		r := resp.(*kmsg.AllocateProducerIDsResponse)
		if r.ErrorCode != 0 {
			return 0, 0, fmt.Errorf("controller at %s: %w", addr, kerr.Code(r.ErrorCode))
		}
		return r.ProducerIDStart, r.ProducerIDLen, nil
	}
}

// controllerAddr is the controller's address on listener (or its first
// endpoint), from the view.
func controllerAddr(v *cluster.View, listener string) (string, bool) {
	return v.ControllerAddr(listener)
}

// clusterInitProducerID answers an idempotent producer's InitProducerId
// with an id from the cluster's blocks.
func (a *metadataActor) clusterInitProducerID(req *wire.Request, resp *kmsg.InitProducerIDResponse) {
	log := a.env.Log
	a.cfg.Cluster.links.pids.take(func(id int64, code kerr.Code) {
		if code != kerr.None {
			log.Warn("InitProducerId: no producer ids from the controller yet; the client retries", "client", req.ClientAddr)
			resp.ErrorCode = code.Int16()
		} else {
			resp.ProducerID, resp.ProducerEpoch = id, 0
		}
		env.Reply(req, resp)
	})
}
