package interbroker

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// conn is one TCP connection to one peer address. Writes are serialised by
// wmu, which also hands out correlation ids, so requests leave in the
// order their ids were taken; one reader goroutine matches each response
// frame to the oldest request still waiting (Kafka answers a connection's
// requests in order), and anything else kills the connection.
type conn struct {
	addr     string
	nc       net.Conn
	timeout  time.Duration
	maxBytes int32
	format   *kmsg.RequestFormatter
	log      *slog.Logger

	// ready is closed once the dial and the ApiVersions handshake are
	// over; then versions is set, or the connection is dead.
	ready    chan struct{}
	versions map[int16]versionRange
	// openErr is why the handshake or the authentication failed, when
	// they did (set before ready is closed).
	openErr error
	// renewAt is when the connection's SASL session is due for renewal
	// (Unix nanoseconds; 0: never): from then on it takes no new
	// requests (security.go).
	renewAt atomic.Int64

	wmu  sync.Mutex
	corr int32

	mu      sync.Mutex
	pending []*call // written, waiting for their response, oldest first
	err     error   // why the connection died; nil while alive
	dead    chan struct{}
}

// call is one request on a connection awaiting its response frame.
type call struct {
	corr   int32
	result chan callResult // buffered: the reader never waits for an abandoned call
	buf    []byte          // where the reader may put the response (a ResponseBuffer's), or nil
}

type callResult struct {
	frame []byte
	err   error
}

func newConn(addr string, cfg *Config, format *kmsg.RequestFormatter) *conn {
	return &conn{
		addr:     addr,
		timeout:  cfg.Timeout,
		maxBytes: cfg.MaxResponseBytes,
		format:   format,
		log:      cfg.Log,
		ready:    make(chan struct{}),
		dead:     make(chan struct{}),
	}
}

// alive reports whether the connection has not died (it may still be
// opening).
func (c *conn) alive() bool {
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

// expired reports whether the connection's SASL session is due for
// renewal: new requests go to a new connection.
func (c *conn) expired(now time.Time) bool {
	at := c.renewAt.Load()
	return at != 0 && now.UnixNano() >= at
}

// kill closes the connection and fails every request waiting on it with
// err (wrapped in ErrConnection). Only the first kill counts.
func (c *conn) kill(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = fmt.Errorf("%w: %s: %w", ErrConnection, c.addr, err)
	pending, nc := c.pending, c.nc
	c.pending = nil
	close(c.dead)
	c.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
	c.log.Debug("interbroker: connection closed", "addr", c.addr, "err", err)
	for _, p := range pending {
		p.result <- callResult{err: c.err}
	}
}

// deathErr is the error the connection died with.
func (c *conn) deathErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// write frames req at its current version and puts it on the wire. The
// call is queued before the bytes go out, so the reader always finds it.
func (c *conn) write(req kmsg.Request, buf []byte) (*call, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	cl := &call{corr: c.corr, result: make(chan callResult, 1), buf: buf}
	c.corr++
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.pending = append(c.pending, cl)
	c.mu.Unlock()
	frame := appendRequest(c.format, req, cl.corr)
	c.nc.SetWriteDeadline(time.Now().Add(c.timeout))
	if _, err := c.nc.Write(frame); err != nil {
		c.kill(fmt.Errorf("writing %s: %w", kmsg.NameForKey(req.Key()), err))
		return nil, c.deathErr()
	}
	return cl, nil
}

// wait returns cl's response frame. A caller whose ctx ends abandons the
// call (its response is read and dropped later, the connection stays); a
// response that does not come within the timeout kills the connection.
func (c *conn) wait(ctx context.Context, cl *call, what string) ([]byte, error) {
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case r := <-cl.result:
		return r.frame, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("interbroker: %s to %s: %w", what, c.addr, context.Cause(ctx))
	case <-timer.C:
		err := fmt.Errorf("%w: %s to %s: no response in %v", ErrTimeout, what, c.addr, c.timeout)
		c.kill(err)
		return nil, err
	}
}

// readLoop reads response frames until the connection dies and hands each
// to the oldest waiting call.
func (c *conn) readLoop() {
	r := bufio.NewReaderSize(c.nc, 64<<10)
	var size [4]byte
	// Responses come in order, so the frame being read is the oldest
	// call's: it may go into the buffer that call brought.
	oldestBuffer := func() []byte {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.pending) == 0 {
			return nil
		}
		return c.pending[0].buf
	}
	for {
		frame, err := readFrame(r, &size, c.maxBytes, oldestBuffer)
		if err != nil {
			c.kill(fmt.Errorf("reading: %w", err))
			return
		}
		got := frameCorrelationID(frame)
		c.mu.Lock()
		if len(c.pending) == 0 {
			c.mu.Unlock()
			c.kill(fmt.Errorf("unsolicited response (correlation id %d)", got))
			return
		}
		cl := c.pending[0]
		c.pending = c.pending[1:]
		c.mu.Unlock()
		if got != cl.corr {
			c.kill(fmt.Errorf("response with correlation id %d, expected %d", got, cl.corr))
			cl.result <- callResult{err: c.deathErr()}
			return
		}
		cl.result <- callResult{frame: frame}
	}
}
