package interbroker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ChannelConfig configures a Channel. The zero value works.
type ChannelConfig struct {
	// Log receives a warning when a broker's connection fails and a
	// line when it works again (not one per retry).
	Log *slog.Logger
	// Backoff is the wait before the first retry of a request whose
	// connection failed (default 100ms, Kafka's retry.backoff.ms); it
	// doubles on every further failure up to MaxBackoff (default 5s).
	Backoff, MaxBackoff time.Duration
}

// Channel is Kafka's ControllerChannelManager: a queue per target broker,
// whose requests go out in order, each once the one before is answered.
// A request that fails for want of a connection (ErrConnection,
// ErrTimeout) is sent again, after a back-off, until it is answered or its
// broker is removed; any other outcome goes to its callback and the queue
// moves on. Safe for concurrent use.
type Channel struct {
	client *Client
	cfg    ChannelConfig
	wg     sync.WaitGroup // one per queue goroutine

	mu     sync.Mutex
	queues map[int32]*queue
	closed bool
}

// queue is one broker's requests and the goroutine that sends them.
type queue struct {
	id     int32
	wake   chan struct{} // buffered 1: something was enqueued
	ctx    context.Context
	cancel context.CancelCauseFunc // cause: ErrRemoved or ErrClosed

	// Guarded by Channel.mu.
	addr  string
	items []queued
}

type queued struct {
	req        kmsg.Request
	onResponse func(kmsg.Response, error)
}

// NewChannel returns a Channel that sends through client. The Channel
// does not own the client: Close the Channel first, then the Client.
func NewChannel(client *Client, cfg ChannelConfig) *Channel {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.Backoff {
		cfg.MaxBackoff = max(5*time.Second, cfg.Backoff)
	}
	return &Channel{client: client, cfg: cfg, queues: make(map[int32]*queue)}
}

// AddBroker starts broker id's queue, sending to addr. For a broker
// already added it only changes the address, from the next attempt on
// (a broker that moved keeps its queue).
func (ch *Channel) AddBroker(id int32, addr string) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return
	}
	if q := ch.queues[id]; q != nil {
		q.addr = addr
		return
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	q := &queue{id: id, addr: addr, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel}
	ch.queues[id] = q
	ch.wg.Add(1)
	go ch.run(q)
}

// RemoveBroker stops broker id's queue: the request in flight and those
// queued are answered ErrRemoved (on the queue's goroutine, in order,
// after RemoveBroker returns). Removing an unknown broker does nothing.
func (ch *Channel) RemoveBroker(id int32) {
	ch.mu.Lock()
	q := ch.queues[id]
	delete(ch.queues, id)
	ch.mu.Unlock()
	if q != nil {
		q.cancel(fmt.Errorf("%w: broker %d", ErrRemoved, id))
	}
}

// Enqueue queues req for broker id; onResponse (which may be nil) is
// called once, on the queue's goroutine, with the response or the error.
// For a broker that is not added, or after Close, onResponse is called
// before Enqueue returns, with ErrRemoved or ErrClosed. Pin req to send it
// at an exact version.
func (ch *Channel) Enqueue(id int32, req kmsg.Request, onResponse func(kmsg.Response, error)) {
	ch.mu.Lock()
	q := ch.queues[id]
	if q == nil || ch.closed {
		closed := ch.closed
		ch.mu.Unlock()
		err := fmt.Errorf("%w: broker %d was not added", ErrRemoved, id)
		if closed {
			err = fmt.Errorf("%w: channel to broker %d", ErrClosed, id)
		}
		if onResponse != nil {
			onResponse(nil, err)
		}
		return
	}
	q.items = append(q.items, queued{req: req, onResponse: onResponse})
	ch.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default: // already woken
	}
}

// Close stops every queue, answering what they hold with ErrClosed, and
// waits for their goroutines (so for the callbacks). Do not call it from a
// callback.
func (ch *Channel) Close() {
	ch.mu.Lock()
	ch.closed = true
	queues := ch.queues
	ch.queues = map[int32]*queue{}
	ch.mu.Unlock()
	for _, q := range queues {
		q.cancel(fmt.Errorf("%w: channel to broker %d", ErrClosed, q.id))
	}
	ch.wg.Wait()
}

// run sends q's requests one at a time until q is stopped, then answers
// whatever is left with the reason.
func (ch *Channel) run(q *queue) {
	defer ch.wg.Done()
	for {
		head, ok := ch.head(q)
		if !ok {
			break
		}
		resp, err := ch.deliver(q, head.req)
		if err != nil && q.ctx.Err() != nil {
			break // the head is answered with the rest, below
		}
		ch.mu.Lock()
		q.items = q.items[1:]
		ch.mu.Unlock()
		if head.onResponse != nil {
			head.onResponse(resp, err)
		}
	}
	ch.mu.Lock()
	left := q.items
	q.items = nil
	ch.mu.Unlock()
	cause := context.Cause(q.ctx)
	for _, it := range left {
		if it.onResponse != nil {
			it.onResponse(nil, cause)
		}
	}
}

// head waits for q's first request; false once q is stopped.
func (ch *Channel) head(q *queue) (queued, bool) {
	for {
		ch.mu.Lock()
		if len(q.items) > 0 && q.ctx.Err() == nil {
			it := q.items[0]
			ch.mu.Unlock()
			return it, true
		}
		ch.mu.Unlock()
		select {
		case <-q.wake:
		case <-q.ctx.Done():
			return queued{}, false
		}
	}
}

// deliver sends req until it is answered, fails for a reason other than
// the connection, or q is stopped.
func (ch *Channel) deliver(q *queue, req kmsg.Request) (kmsg.Response, error) {
	backoff := ch.cfg.Backoff
	for failures := 0; ; failures++ {
		ch.mu.Lock()
		addr := q.addr
		ch.mu.Unlock()
		resp, err := ch.client.Send(q.ctx, addr, req)
		if !retriable(err) || q.ctx.Err() != nil {
			if failures > 0 && err == nil {
				ch.cfg.Log.Info("interbroker: broker reachable again", "broker", q.id, "addr", addr, "failures", failures)
			}
			return resp, err
		}
		if failures == 0 {
			ch.cfg.Log.Warn("interbroker: cannot reach broker; retrying until it answers or leaves the cluster",
				"broker", q.id, "addr", addr, "request", kmsg.NameForKey(req.Key()), "err", err)
		}
		timer := time.NewTimer(backoff)
		select {
		case <-timer.C:
		case <-q.ctx.Done():
			timer.Stop()
			return nil, err
		}
		backoff = min(2*backoff, ch.cfg.MaxBackoff)
	}
}

// retriable reports whether a Send that failed with err may succeed on a
// new connection: not once the Client is closed.
func retriable(err error) bool {
	return (errors.Is(err, ErrConnection) || errors.Is(err, ErrTimeout)) && !errors.Is(err, ErrClosed)
}
