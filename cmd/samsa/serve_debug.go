package main

import (
	"errors"
	"expvar"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"

	"github.com/samsa-io/samsa/netloop"
)

// debugStats is the running server, whose counters /debug/vars shows as
// "netloop" (requests, responses, bytes by sendfile, ...): with a CPU
// profile they give the cost per request.
var (
	debugStats       atomic.Pointer[netloop.Server]
	publishDebugVars sync.Once
)

// startDebugListener serves Go's profiler (net/http/pprof) on addr, for
// finding where a running broker spends CPU and memory:
//
//	samsa serve --debug-listen 127.0.0.1:6060
//	go tool pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=20
//	curl http://127.0.0.1:6060/debug/vars   # netloop's counters, Go's memstats
//
// It is off by default and meant for loopback: the profiles expose the
// broker's internals to whoever can connect.
func startDebugListener(addr string, logger *slog.Logger) (*http.Server, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	publishDebugVars.Do(func() {
		expvar.Publish("netloop", expvar.Func(func() any {
			if s := debugStats.Load(); s != nil {
				return s.Stats()
			}
			return nil
		}))
	})
	mux.Handle("/debug/vars", expvar.Handler())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("debug listener stopped", "addr", addr, "err", err)
		}
	}()
	logger.Info("profiler listening", "addr", ln.Addr().String())
	return srv, nil
}
