package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is the HTTP side of one broker: listeners on every configured
// address, one multiplexer.
type Server struct {
	addrs  []string
	logger *slog.Logger
	mux    *http.ServeMux
	health *health

	mu        sync.Mutex
	listeners []net.Listener
	srv       *http.Server
	done      sync.WaitGroup
}

// New prepares a server for the HOST:PORT addresses (samsa.http.listeners);
// nothing listens until Start.
func New(addrs []string, logger *slog.Logger) *Server {
	s := &Server{addrs: addrs, logger: logger, mux: http.NewServeMux(), health: newHealth()}
	s.mux.HandleFunc("GET /healthz", s.health.serveHealthz)
	s.mux.HandleFunc("GET /readyz", s.health.serveReadyz)
	return s
}

// Handle mounts h for pattern (net/http.ServeMux patterns: "GET /metrics",
// "/subjects/", ...). It may be called before or after Start (the probes
// answer while the logs open; handlers that need the broker are mounted
// once it exists). A pattern that clashes with one already mounted
// panics, as ServeMux does, because it is a wiring bug.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// SetReady reports whether the broker serves; /readyz answers 503 with
// the reason until it is called with nil.
func (s *Server) SetReady(notReady error) { s.health.set(notReady) }

// AddReadyCheck adds a condition /readyz asks on every probe once
// SetReady(nil) was called: a non-nil error answers 503 with it (a
// cluster broker whose followed partitions are not yet in their ISR).
// Checks must be cheap and must not block.
func (s *Server) AddReadyCheck(check func() error) { s.health.addCheck(check) }

// Start listens on every address and serves in the background. A listen
// failure closes whatever was opened and is returned.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range s.listeners {
				_ = l.Close()
			}
			s.listeners = nil
			return fmt.Errorf("samsa.http.listeners %s: %w", a, err)
		}
		s.listeners = append(s.listeners, ln)
	}
	// Timeouts bound what a slow or hostile client can hold: headers must
	// arrive promptly, idle keep-alive connections go away. No write
	// timeout: a long message-browser read or metrics scrape may stream.
	s.srv = &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	for _, ln := range s.listeners {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.logger.Error("http listener stopped", "addr", ln.Addr().String(), "err", err)
			}
		}()
		s.logger.Info("http listening", "addr", ln.Addr().String())
	}
	return nil
}

// Addrs are the bound addresses (port 0 resolved), in the configured order.
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]net.Addr, len(s.listeners))
	for i, l := range s.listeners {
		out[i] = l.Addr()
	}
	return out
}

// Shutdown stops accepting, lets requests in flight finish within ctx,
// then closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, srv.Close())
	}
	s.done.Wait()
	return err
}
