package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ErrClosed is returned by operations on a proxy after Close.
var ErrClosed = errors.New("faultproxy: proxy is closed")

// dialTimeout bounds the connection to the target: a test's target is a
// local process, so a slow dial means it is gone.
const dialTimeout = 5 * time.Second

// Proxy forwards TCP connections from its own loopback address to a target
// address, and can cut them. See the package documentation.
type Proxy struct {
	target string
	ln     net.Listener

	mu           sync.Mutex
	conns        map[*link]struct{}
	down         bool
	closed       bool
	accepted     int64
	refused      int64
	cuts         int64
	clientClosed int64
	targetClosed int64
	// changed is closed, and replaced, whenever the numbers Stats reports
	// change, so WaitStats wakes on the change instead of polling.
	changed chan struct{}

	wg sync.WaitGroup // the accept loop and every link's goroutines
}

// link is one proxied connection: the client's socket and ours to the
// target.
type link struct {
	client, server *net.TCPConn
}

// New starts a proxy to target ("host:port") listening on a free port of
// 127.0.0.1. The target is dialled once per accepted connection, so it may
// come up after New returns.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{target: target, ln: ln, conns: make(map[*link]struct{}), changed: make(chan struct{})}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the proxy's "127.0.0.1:port" address: where clients connect.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// CutAll resets every connection currently proxied, both towards the
// client and towards the target, and returns how many it cut. New
// connections are still accepted (unless the proxy is down).
func (p *Proxy) CutAll() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		links = append(links, l)
		delete(p.conns, l)
	}
	p.cuts += int64(len(links))
	p.changedLocked()
	p.mu.Unlock()
	for _, l := range links {
		l.reset()
	}
	return len(links)
}

// SetDown makes the proxy refuse new connections (down=true: each is reset
// as soon as it is accepted) or accept them again (down=false). Open
// connections are not touched.
func (p *Proxy) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
}

// Stats counts what the proxy did since New.
type Stats struct {
	Accepted int64 // connections forwarded to the target
	Refused  int64 // connections reset because the proxy was down or the target unreachable
	Cut      int64 // connections reset by CutAll or Close
	Open     int   // connections proxied right now
	// ClientClosed and TargetClosed count clean ends of stream (FIN) from
	// each side: who hung up, when nobody cut.
	ClientClosed int64
	TargetClosed int64
}

// Stats returns the proxy's counters, for tests that check their client
// really went through the proxy.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.statsLocked()
}

func (p *Proxy) statsLocked() Stats {
	return Stats{Accepted: p.accepted, Refused: p.refused, Cut: p.cuts, Open: len(p.conns),
		ClientClosed: p.clientClosed, TargetClosed: p.targetClosed}
}

// WaitStats waits until ok holds for the proxy's Stats, and returns them.
// The counters move on the proxy's own goroutines (a cut link's copies
// end, a peer hangs up), a little after whatever caused it, so a test
// that expects a count waits for it here. If ctx ends first, WaitStats
// returns the last Stats it saw with ctx's error.
func (p *Proxy) WaitStats(ctx context.Context, ok func(Stats) bool) (Stats, error) {
	for {
		p.mu.Lock()
		s, changed := p.statsLocked(), p.changed
		p.mu.Unlock()
		if ok(s) {
			return s, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

// changedLocked wakes every WaitStats; call it with mu held after
// changing anything Stats reports.
func (p *Proxy) changedLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Close stops listening, resets every open connection and waits for the
// proxy's goroutines to end. Calling it again is a no-op.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CutAll()
	p.wg.Wait()
	return err
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Temporary failures (EMFILE and the like): back off briefly.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		client := c.(*net.TCPConn)
		p.mu.Lock()
		refuse := p.down || p.closed
		if refuse {
			p.refused++
			p.changedLocked()
		}
		p.mu.Unlock()
		if refuse {
			resetConn(client)
			continue
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

// serve dials the target for one client and starts the two copy
// directions.
func (p *Proxy) serve(client *net.TCPConn) {
	defer p.wg.Done()
	c, err := net.DialTimeout("tcp", p.target, dialTimeout)
	if err != nil {
		p.mu.Lock()
		p.refused++
		p.changedLocked()
		p.mu.Unlock()
		resetConn(client)
		return
	}
	l := &link{client: client, server: c.(*net.TCPConn)}
	p.mu.Lock()
	if p.down || p.closed {
		// Went down while we dialled: behave as if refused.
		p.refused++
		p.changedLocked()
		p.mu.Unlock()
		l.reset()
		return
	}
	p.conns[l] = struct{}{}
	p.accepted++
	p.changedLocked()
	p.mu.Unlock()

	var both sync.WaitGroup
	both.Add(2)
	p.wg.Add(2)
	go func() { defer p.wg.Done(); defer both.Done(); p.pipe(l, l.server, l.client) }()
	go func() { defer p.wg.Done(); defer both.Done(); p.pipe(l, l.client, l.server) }()
	both.Wait()
	p.forget(l)
	l.client.Close()
	l.server.Close()
}

// pipe copies src to dst until src ends. A clean end of stream is passed
// on as a half-close; an error (including a cut) resets the whole link so
// the other direction ends too.
func (p *Proxy) pipe(l *link, dst, src *net.TCPConn) {
	_, err := io.Copy(dst, src)
	if err == nil {
		p.mu.Lock()
		if src == l.client {
			p.clientClosed++
		} else {
			p.targetClosed++
		}
		p.changedLocked()
		p.mu.Unlock()
		_ = dst.CloseWrite()
		return
	}
	if p.forget(l) {
		l.reset()
	}
}

// forget removes l from the open set and reports whether it was there (a
// cut removes it first, so only one party resets a link).
func (p *Proxy) forget(l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.conns[l]
	if ok {
		delete(p.conns, l)
		p.changedLocked()
	}
	return ok
}

func (l *link) reset() {
	resetConn(l.client)
	resetConn(l.server)
}

// resetConn closes c so that the peer sees a TCP reset, not a clean end
// of stream.
func resetConn(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}
