package netloop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/samsa-io/samsa/wire"
)

// Handler receives decoded requests. Handle must not block (it is called
// on a gnet loop); the handler calls req.Reply exactly once, from any
// goroutine, possibly out of order.
type Handler interface{ Handle(req *wire.Request) }

// Drainer is implemented by a Handler that holds requests back on purpose
// (fetches long-polling for data): Shutdown calls Drain once, when it stops
// decoding, so those are answered now rather than at their own deadline.
type Drainer interface{ Drain() }

// Server errors.
var (
	ErrStarted    = errors.New("netloop: server already started")
	ErrNotStarted = errors.New("netloop: server not started")
)

// readBufferCap is gnet's per-loop read buffer: the most one read(2) takes
// from a socket. Per loop, not per connection.
const readBufferCap = 256 << 10

const (
	stateNew int32 = iota
	stateRunning
	stateStopping
)

// Server is a set of PLAINTEXT listeners served by gnet event loops. See
// the package documentation for its threading model.
type Server struct {
	cfg   Config
	h     Handler
	log   *slog.Logger
	stats counters

	state   atomic.Int32
	eng     gnet.Engine   // set in OnBoot, read after booted
	booted  chan struct{} // closed by OnBoot
	frames  *framePool    // buffers of large frames (framepool.go)
	runDone chan struct{} // closed when gnet.Rotate returns
	runErr  error         // gnet.Rotate's result, read after runDone
	addrs   []net.Addr

	// Graceful shutdown: draining stops decoding and accepting; pending
	// counts requests decoded and not yet finished (written, or dropped
	// because the connection went away).
	draining atomic.Bool
	pending  atomic.Int64
	drained  chan struct{} // a token each time pending reaches 0 while draining
	writers  sync.WaitGroup

	sweepStop chan struct{}
	sweepDone chan struct{}

	mu    sync.Mutex
	conns map[*conn]struct{}
	open  int
	perIP map[string]int

	pauseWarned atomic.Bool
	hooks       testHooks
}

// testHooks let in-package tests observe the loop.
type testHooks struct {
	afterTraffic func(inboundBuffered int) // after each OnTraffic, on the loop
	afterClose   func()                    // after each OnClose of an admitted connection
	draining     func()                    // once Shutdown has begun draining
	handoff      func()                    // after a fast-path write is handed to the writer
}

// New checks cfg and returns a server that is not yet listening.
func New(cfg Config, h Handler) (*Server, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: nil Handler", ErrConfig)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Server{
		cfg:       cfg,
		h:         h,
		log:       cfg.Logger,
		booted:    make(chan struct{}),
		frames:    newFramePool(),
		runDone:   make(chan struct{}),
		drained:   make(chan struct{}, 1),
		sweepStop: make(chan struct{}),
		sweepDone: make(chan struct{}),
		conns:     make(map[*conn]struct{}),
		perIP:     make(map[string]int),
	}, nil
}

// Start binds every listener and starts the event loops. It returns once
// every listener accepts connections (or with the bind error).
func (s *Server) Start() error {
	if !s.state.CompareAndSwap(stateNew, stateRunning) {
		return ErrStarted
	}
	urls := make([]string, len(s.cfg.Listeners))
	for i, l := range s.cfg.Listeners {
		urls[i] = "tcp://" + l
	}
	opts := []gnet.Option{
		gnet.WithMulticore(true),
		// One listener, accepted by gnet's main reactor and spread over the
		// loops: with SO_REUSEPORT every loop would bind its own listener,
		// and port 0 would give each a different port.
		gnet.WithReusePort(false),
		gnet.WithReuseAddr(true),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithReadBufferCap(readBufferCap),
		gnet.WithLogger(gnetLogger{s.log}),
	}
	if s.cfg.EventLoops > 0 {
		opts = append(opts, gnet.WithNumEventLoop(s.cfg.EventLoops))
	}
	go func() {
		s.runErr = gnet.Rotate(&events{s: s}, urls, opts...)
		close(s.runDone)
	}()
	select {
	case <-s.booted:
	case <-s.runDone:
		close(s.sweepDone)
		if s.runErr == nil {
			s.runErr = errors.New("gnet engine stopped before boot")
		}
		return fmt.Errorf("netloop: start: %w", s.runErr)
	}
	go s.sweepIdle()
	go s.watchEngine()
	for _, l := range s.cfg.Listeners {
		a, err := s.boundAddr(l)
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = s.Shutdown(ctx)
			return fmt.Errorf("netloop: listener %s: %w", l, err)
		}
		s.addrs = append(s.addrs, a)
	}
	s.log.Info("netloop: listening", "addrs", s.addrs, "max_request_bytes", s.cfg.MaxRequestBytes,
		"max_in_flight_per_conn", s.cfg.MaxInFlightPerConn)
	return nil
}

// watchEngine reports a gnet engine that stops on its own. gnet stops the
// whole engine when accept(2) fails with anything but a transient error,
// notably EMFILE/ENFILE when the process runs out of descriptors (each
// connection costs two: gnet's and the writer's dup), so keep
// MaxConnections well below RLIMIT_NOFILE/2.
func (s *Server) watchEngine() {
	<-s.runDone
	if s.state.Load() == stateRunning {
		s.log.Error("netloop: the gnet engine stopped unexpectedly; no connections are served any more",
			"err", s.runErr, "listeners", s.cfg.Listeners)
	}
}

// boundAddr asks the kernel where listener l is bound (port 0 resolved):
// gnet has no Addr(), but it can hand out a dup of the listener.
func (s *Server) boundAddr(l string) (net.Addr, error) {
	fd, err := s.eng.DupListener("tcp", l)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "listener")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	return ln.Addr(), nil
}

// Addrs returns the listeners' bound addresses, in Config.Listeners order.
func (s *Server) Addrs() []net.Addr { return append([]net.Addr(nil), s.addrs...) }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.snapshotStats() }

// Shutdown stops accepting connections and decoding requests, waits until
// every decoded request has been answered and its response written (or
// its connection has gone), then closes every connection and stops the
// loops. ctx bounds the whole; on expiry the connections are closed
// anyway and ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	switch {
	case s.state.CompareAndSwap(stateRunning, stateStopping):
	case s.state.Load() == stateNew:
		return ErrNotStarted
	default:
		return nil // already shut down or shutting down
	}
	s.draining.Store(true)
	if d, ok := s.h.(Drainer); ok {
		d.Drain()
	}
	if h := s.hooks.draining; h != nil {
		h()
	}
	var err error
	for s.pending.Load() > 0 && err == nil {
		select {
		case <-s.drained:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if left := s.pending.Load(); left > 0 {
		s.log.Warn("netloop: shutdown deadline passed with requests in flight; closing anyway", "in_flight", left)
	}
	close(s.sweepStop)
	<-s.sweepDone

	// Engine.Stop polls for completion every 500 ms; ask it to stop with a
	// context that is already done, and wait for gnet.Rotate to return
	// instead. Every connection gets OnClose before the loops exit.
	stopNow, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.eng.Stop(stopNow)
	wait := func(done <-chan struct{}) {
		if err != nil {
			return
		}
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	wait(s.runDone)
	writersDone := make(chan struct{})
	go func() { s.writers.Wait(); close(writersDone) }()
	wait(writersDone)
	if err == nil {
		s.log.Info("netloop: stopped", "addrs", s.addrs)
	}
	return err
}

// begin counts a request about to be decoded, unless the server is
// draining. The order (count, then check) pairs with Shutdown's (set
// draining, then read the count): a request is either seen by Shutdown or
// backs out.
func (s *Server) begin() bool {
	s.pending.Add(1)
	if s.draining.Load() {
		s.finish(1)
		return false
	}
	return true
}

// finish marks n requests as done (written or dropped).
func (s *Server) finish(n int) {
	if n == 0 {
		return
	}
	if s.pending.Add(-int64(n)) == 0 && s.draining.Load() {
		select {
		case s.drained <- struct{}{}:
		default:
		}
	}
}

// admitConn applies max.connections and max.connections.per.ip and, if
// the connection may stay, counts it. It returns the refusal reason.
func (s *Server) admitConn(ip string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.draining.Load():
		return "shutting down"
	case s.cfg.MaxConnections > 0 && s.open >= s.cfg.MaxConnections:
		return fmt.Sprintf("max.connections (%d) reached", s.cfg.MaxConnections)
	case s.cfg.MaxConnectionsPerIP > 0 && s.perIP[ip] >= s.cfg.MaxConnectionsPerIP:
		return fmt.Sprintf("max.connections.per.ip (%d) reached for %s", s.cfg.MaxConnectionsPerIP, ip)
	}
	s.open++
	s.perIP[ip]++
	return ""
}

// forgetConn undoes admitConn.
func (s *Server) forgetConn(ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open--
	if s.perIP[ip]--; s.perIP[ip] <= 0 {
		delete(s.perIP, ip)
	}
}

// sweepIdle closes connections idle for longer than ConnectionsMaxIdle.
// It runs on its own goroutine and only uses gnet's concurrency-safe
// Conn.Close.
func (s *Server) sweepIdle() {
	defer close(s.sweepDone)
	idle := s.cfg.ConnectionsMaxIdle
	if idle < 0 {
		<-s.sweepStop
		return
	}
	t := time.NewTicker(min(max(idle/4, 10*time.Millisecond), 30*time.Second))
	defer t.Stop()
	var victims []*conn
	for {
		select {
		case <-s.sweepStop:
			return
		case now := <-t.C:
			cutoff := now.Add(-idle).UnixNano()
			victims = victims[:0]
			s.mu.Lock()
			for c := range s.conns {
				if c.idleSince(cutoff) {
					victims = append(victims, c)
				}
			}
			s.mu.Unlock()
			for _, c := range victims {
				if c.closeFromOutside(&s.stats.connectionsIdleClosed) {
					s.log.Debug("netloop: closing idle connection", "client", c.remote, "client_id", c.loopClientID(), "idle", idle)
				}
			}
			clear(victims)
		}
	}
}

// hostOf returns the IP of a remote address, for per-IP limits.
func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
