package interbroker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config configures a Client. The zero value works.
type Config struct {
	// ClientID is the request header's client id (default
	// "samsa-broker"); "samsa-broker-<id>" names the sending broker in
	// the peer's request log.
	ClientID string
	// SoftwareVersion is sent in ApiVersions v3 (default "dev"); it must
	// match [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?.
	SoftwareVersion string
	// Log receives one line per connection opened or lost (Debug).
	Log *slog.Logger
	// Timeout bounds the dial, the handshake and the wait for each
	// response (default 30s, Kafka's controller.socket.timeout.ms).
	Timeout time.Duration
	// Dial opens connections (default: TCP).
	Dial Dialer
	// MaxResponseBytes refuses larger response frames (default 100 MiB,
	// Kafka's socket.request.max.bytes).
	MaxResponseBytes int32
	// Security is TLS and SASL for every connection (security.go); the
	// zero value is PLAINTEXT.
	Security Security
}

// Dialer opens a connection to a peer address.
type Dialer func(ctx context.Context, addr string) (net.Conn, error)

func defaultDial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// Client sends requests to other brokers: one connection per address,
// opened on first use and again after it is lost. Safe for concurrent use.
type Client struct {
	cfg    Config
	format *kmsg.RequestFormatter

	ctx    context.Context // ends on Close: stops dials and handshakes
	cancel context.CancelFunc
	wg     sync.WaitGroup // dials, handshakes and readers

	mu    sync.Mutex
	conns map[string]*conn
	// retired are connections whose SASL session came due: they take no
	// new requests and are closed once their requests in flight have had
	// Config.Timeout to be answered, or by Close.
	retired map[*conn]struct{}
	closed  bool
}

// New returns a Client; it opens nothing until the first Send.
func New(cfg Config) *Client {
	if cfg.ClientID == "" {
		cfg.ClientID = "samsa-broker"
	}
	if cfg.SoftwareVersion == "" {
		cfg.SoftwareVersion = "dev"
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Dial == nil {
		cfg.Dial = defaultDial
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 100 << 20
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{
		cfg:     cfg,
		format:  kmsg.NewRequestFormatter(kmsg.FormatterClientID(cfg.ClientID)),
		ctx:     ctx,
		cancel:  cancel,
		conns:   make(map[string]*conn),
		retired: make(map[*conn]struct{}),
	}
}

// Send sends req to the broker at addr and returns its response.
//
// The version is the highest both sides know, min(req.MaxVersion(), the
// peer's max), unless req is Pinned; Send sets it on req (so one request
// value must not be in two Sends at once). Requests to one address share a
// connection and may be in flight together; their responses come back in
// order. If ctx ends first, Send returns its error and the response, when
// it comes, is dropped; if Config.Timeout passes first, the connection is
// closed (ErrTimeout) and the next Send dials again. A lost connection
// fails every request in flight on it with ErrConnection.
func (c *Client) Send(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	return c.send(ctx, addr, req, nil)
}

// SendReusing is Send with the response read into rb's memory when it
// fits, so a caller that sends the same kind of request over and over (a
// follower's fetches) does not allocate a new frame for every response.
// The response aliases rb (records, for a FetchResponse) until the next
// SendReusing with it or rb.Drop; a caller that hands parts of it to
// others must know they are done with them first. On an error rb lets its
// memory go: an abandoned call's response may still be read into it.
func (c *Client) SendReusing(ctx context.Context, addr string, req kmsg.Request, rb *ResponseBuffer) (kmsg.Response, error) {
	return c.send(ctx, addr, req, rb)
}

func (c *Client) send(ctx context.Context, addr string, req kmsg.Request, rb *ResponseBuffer) (kmsg.Response, error) {
	req, pinned := unpin(req)
	cn, err := c.connect(ctx, addr)
	if err != nil {
		return nil, err
	}
	v, err := chooseVersion(cn.versions, req, pinned)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, addr)
	}
	req.SetVersion(v)
	var buf []byte
	if rb != nil {
		buf = rb.b
		rb.b = nil // lent to the call until its response is back
	}
	cl, err := cn.write(req, buf)
	if err != nil {
		return nil, err
	}
	frame, err := cn.wait(ctx, cl, kmsg.NameForKey(req.Key()))
	if err != nil {
		return nil, err
	}
	rb.keep(frame)
	resp := req.ResponseKind()
	resp.SetVersion(v)
	if err := decodeResponse(frame, resp); err != nil {
		return nil, fmt.Errorf("%w (%s)", err, addr)
	}
	return resp, nil
}

// connect returns addr's live connection, opening one if there is none,
// once its handshake is done.
func (c *Client) connect(ctx context.Context, addr string) (*conn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	cn := c.conns[addr]
	if cn != nil && cn.alive() && cn.expired(time.Now()) {
		c.retire(cn)
		cn = nil
	}
	if cn == nil || !cn.alive() {
		cn = newConn(addr, &c.cfg, c.format)
		c.conns[addr] = cn
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			cn.open(c.ctx, c.cfg.Dial, &c.cfg.Security, c.cfg.SoftwareVersion, &c.wg)
		}()
	}
	c.mu.Unlock()
	select {
	case <-cn.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("interbroker: connecting to %s: %w", addr, context.Cause(ctx))
	}
	if cn.versions == nil {
		if cn.openErr != nil {
			return nil, cn.openErr
		}
		return nil, cn.deathErr()
	}
	return cn, nil
}

// retire takes a connection whose SASL session came due out of service:
// its requests in flight get Config.Timeout to be answered, then it is
// closed. Called with c.mu held.
func (c *Client) retire(cn *conn) {
	c.retired[cn] = struct{}{}
	time.AfterFunc(c.cfg.Timeout, func() {
		cn.kill(errSessionRenewed)
		c.mu.Lock()
		delete(c.retired, cn) // a no-op after Close
		c.mu.Unlock()
	})
}

// Close closes every connection, failing the requests in flight with
// ErrConnection, and waits for the client's goroutines to end; later Sends
// return ErrClosed.
func (c *Client) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	conns := slices.Collect(maps.Values(c.conns))
	for cn := range c.retired {
		conns = append(conns, cn)
	}
	c.conns, c.retired = nil, nil
	c.mu.Unlock()
	c.cancel()
	for _, cn := range conns {
		cn.kill(ErrClosed)
	}
	c.wg.Wait()
}
