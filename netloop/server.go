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

// Server is a set of listeners: PLAINTEXT ones served by gnet event
// loops, TLS ones by a reader and a writer goroutine per connection. See
// the package documentation for its threading model.
type Server struct {
	cfg   Config
	h     Handler
	log   *slog.Logger
	stats counters

	state  atomic.Int32
	cli    *gnet.Client // the event loops
	frames *framePool   // buffers of large frames (framepool.go)
	queued queuedBytes  // queued.max.request.bytes (assembly.go)
	lns    []*net.TCPListener
	addrs  []net.Addr

	// Accepting (accept.go).
	acceptors   sync.WaitGroup
	acceptStop  chan struct{}
	enrolling   atomic.Int64  // unix nanoseconds since an enrollment began, or 0
	enrollStuck time.Duration // see watchdog
	stuckSince  int64         // sweeper only: the enrollment seen stuck on the last tick
	spareMu     sync.Mutex
	spare       *os.File // a descriptor held back for the moment they run out

	failOnce sync.Once
	failed   chan struct{} // closed by fail
	failErr  error

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
	// busyClosed sums the busy time of closed connections (busy.go).
	busyClosed int64
	// tlsConns are the connections of TLS listeners (tlsconn.go).
	tlsConns map[*tlsConn]struct{}
	open     int
	openOn   map[string]int // by listener
	perIP    map[string]int
	// limits are the connection limits in force (limits.go).
	limits ConnectionLimits
	// slotFreed, when not nil, is closed when a connection closes: a
	// listener waits on it at max.connections (slots.go).
	slotFreed chan struct{}
	slotLogAt atomic.Int64 // unix nanoseconds of the last slot wait logged

	pauseWarned atomic.Bool
	hooks       testHooks
}

// testHooks let in-package tests observe the loop.
type testHooks struct {
	afterTraffic func(inboundBuffered int) // after each OnTraffic, on the loop
	afterClose   func()                    // after each OnClose of an admitted connection
	draining     func()                    // once Shutdown has begun draining
	handoff      func()                    // after a fast-path write is handed to the writer
	tlsIdleCheck func()                    // each time a TLS reader's idle deadline passes
	// trafficAction, when it reports true, replaces OnTraffic's work with
	// its action (a test kills a loop with gnet.Shutdown).
	trafficAction func() (gnet.Action, bool)
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
		queued:      queuedBytes{limit: cfg.QueuedMaxRequestBytes},
		cfg:         cfg,
		h:           h,
		log:         cfg.Logger,
		frames:      newFramePool(),
		acceptStop:  make(chan struct{}),
		enrollStuck: enrollStuck,
		failed:      make(chan struct{}),
		drained:     make(chan struct{}, 1),
		sweepStop:   make(chan struct{}),
		sweepDone:   make(chan struct{}),
		conns:       make(map[*conn]struct{}),
		tlsConns:    make(map[*tlsConn]struct{}),
		perIP:       make(map[string]int),
		openOn:      make(map[string]int),
		limits:      limitsOf(cfg),
	}, nil
}

// Start binds every listener and starts the event loops. It returns once
// every listener accepts connections (or with the bind error).
func (s *Server) Start() error {
	if !s.state.CompareAndSwap(stateNew, stateRunning) {
		return ErrStarted
	}
	for _, l := range s.cfg.Listeners {
		ln, err := net.Listen("tcp", l)
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("netloop: listener %s: %w", l, err)
		}
		s.lns = append(s.lns, ln.(*net.TCPListener))
		s.addrs = append(s.addrs, ln.Addr())
	}
	opts := []gnet.Option{
		gnet.WithMulticore(true),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithReadBufferCap(readBufferCap),
		gnet.WithLogger(gnetLogger{s.log}),
	}
	if s.cfg.EventLoops > 0 {
		opts = append(opts, gnet.WithNumEventLoop(s.cfg.EventLoops))
	}
	// A gnet client engine: event loops without listeners of their own
	// (accept.go says why).
	cli, err := gnet.NewClient(&events{s: s}, opts...)
	if err == nil {
		err = cli.Start()
	}
	if err != nil {
		s.closeListeners()
		return fmt.Errorf("netloop: start: %w", err)
	}
	s.cli = cli
	s.spare, _ = os.Open(os.DevNull) // held for shedOne; without it, EMFILE only backs off
	go s.sweep()
	for i, ln := range s.lns {
		s.acceptors.Add(1)
		go s.acceptLoop(ln, s.listenerName(i), s.tlsListener(i))
	}
	s.log.Info("netloop: listening", "addrs", s.addrs, "max_request_bytes", s.cfg.MaxRequestBytes,
		"max_in_flight_per_conn", s.cfg.MaxInFlightPerConn, "max_connections", s.cfg.MaxConnections)
	return nil
}

// listenerName is the name of the i-th listener, "" when unnamed.
func (s *Server) listenerName(i int) string {
	if i < len(s.cfg.ListenerNames) {
		return s.cfg.ListenerNames[i]
	}
	return ""
}

// closeListeners closes every listener: new connections are refused.
func (s *Server) closeListeners() {
	for _, ln := range s.lns {
		_ = ln.Close()
	}
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
	s.closeListeners()
	close(s.acceptStop)
	if d, ok := s.h.(Drainer); ok {
		d.Drain()
	}
	if h := s.hooks.draining; h != nil {
		h()
	}
	// An enrollment in progress finishes (OnOpen refuses it), unless the
	// loops have died under it.
	var err error
	acceptorsDone := make(chan struct{})
	go func() { s.acceptors.Wait(); close(acceptorsDone) }()
	select {
	case <-acceptorsDone:
	case <-s.failed: // an acceptor may be stuck on a dead loop
	case <-ctx.Done():
		err = ctx.Err()
	}
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
	s.closeTLSConns() // their goroutines are waited for with the writers

	// Stopping the loops closes every connection (OnClose) first.
	stopped := make(chan struct{})
	go func() {
		_ = s.cli.Stop()
		close(stopped)
	}()
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
	wait(stopped)
	s.spareMu.Lock()
	if s.spare != nil {
		_ = s.spare.Close()
		s.spare = nil
	}
	s.spareMu.Unlock()
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

// admitConn applies max.connections, the listener's max.connections and
// max.connections.per.ip (or the address's override) to a connection of
// listener (the protected listener is spared max.connections) and, if it
// may stay, counts it. It returns the refusal reason.
func (s *Server) admitConn(ip, listener string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining.Load() {
		return "shutting down"
	}
	if key, limit := s.slotRefusalLocked(listener); key != "" {
		return fmt.Sprintf("%s (%d) reached", key, limit)
	}
	if reason := s.ipRefusalLocked(ip); reason != "" {
		return reason
	}
	s.open++
	s.openOn[listener]++
	s.perIP[ip]++
	return ""
}

// forgetConn undoes admitConn.
func (s *Server) forgetConn(ip, listener string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open--
	if s.openOn[listener]--; s.openOn[listener] <= 0 {
		delete(s.openOn, listener)
	}
	if s.perIP[ip]--; s.perIP[ip] <= 0 {
		delete(s.perIP, ip)
	}
	s.slotFreedLocked()
}

// reportUnanswered logs, once each, the requests of conns that have had
// no answer for longer than after: the broker promised every request an
// answer, so one this old is a bug worth a loud line (and its client,
// and every response behind it on its connection, waits until it times
// out).
func (s *Server) reportUnanswered(conns []*conn, tlsConns []*tlsConn, now time.Time, after time.Duration) {
	cutoff := now.Add(-after).UnixNano()
	for _, c := range conns {
		n, oldest := c.unanswered(cutoff, now.UnixNano())
		s.unansweredFound(n, oldest, c.remote, c.loopClientID())
	}
	for _, c := range tlsConns {
		c.mu.Lock()
		n, oldest := unansweredSlots(c.slots, c.writeSeq, c.inFlight, cutoff, now.UnixNano())
		c.mu.Unlock()
		s.unansweredFound(n, oldest, c.remote, c.clientID())
	}
}

// unansweredFound logs and counts n requests of one connection found
// without an answer.
func (s *Server) unansweredFound(n int, oldest time.Duration, remote, clientID string) {
	if n == 0 {
		return
	}
	// The line goes out before the count moves, so whoever sees the
	// count can also find the line.
	s.log.Error("netloop: requests have had no answer for too long; this is a broker bug (the client waits until it times out)",
		"client", remote, "client_id", clientID, "requests", n, "oldest", oldest.Round(time.Millisecond))
	s.stats.unanswered.Add(uint64(n))
}

// sweep closes connections idle for longer than ConnectionsMaxIdle and
// those whose request has been arriving for longer than
// RequestReadTimeout, and runs the accept watchdog. It runs on its own
// goroutine and only uses gnet's concurrency-safe Conn.Close.
func (s *Server) sweep() {
	defer close(s.sweepDone)
	idle, readTimeout, unanswered := s.cfg.ConnectionsMaxIdle, s.cfg.RequestReadTimeout, s.cfg.UnansweredAfter
	every := min(time.Second, max(s.enrollStuck/4, 10*time.Millisecond)) // the watchdog's pace
	for _, d := range []time.Duration{idle, readTimeout, unanswered} {
		if d > 0 {
			every = min(every, max(d/4, 10*time.Millisecond))
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var idlers, stalled, all []*conn
	var allTLS []*tlsConn
	for {
		select {
		case <-s.sweepStop:
			return
		case now := <-t.C:
			s.watchdog(now)
			idleCutoff := now.Add(-idle).UnixNano()
			readCutoff := now.Add(-readTimeout).UnixNano()
			idlers, stalled, all, allTLS = idlers[:0], stalled[:0], all[:0], allTLS[:0]
			s.mu.Lock()
			if unanswered > 0 {
				for c := range s.tlsConns { // their timeouts are their reader's (tlsconn.go)
					allTLS = append(allTLS, c)
				}
			}
			for c := range s.conns {
				if unanswered > 0 {
					all = append(all, c)
				}
				if since := c.frameSince.Load(); readTimeout > 0 && since != 0 && since < readCutoff {
					stalled = append(stalled, c)
				} else if idle > 0 && c.idleSince(idleCutoff) {
					idlers = append(idlers, c)
				}
			}
			s.mu.Unlock()
			for _, c := range stalled {
				if c.closeFromOutside(&s.stats.requestTimeouts) {
					s.log.Warn("netloop: closing connection: a request did not arrive in full in time",
						"client", c.remote, "client_id", c.loopClientID(), "timeout", readTimeout)
				}
			}
			for _, c := range idlers {
				if c.closeFromOutside(&s.stats.connectionsIdleClosed) {
					s.log.Debug("netloop: closing idle connection", "client", c.remote, "client_id", c.loopClientID(), "idle", idle)
				}
			}
			if unanswered > 0 {
				s.reportUnanswered(all, allTLS, now, unanswered)
			}
			clear(idlers)
			clear(stalled)
			clear(all)
			clear(allTLS)
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
