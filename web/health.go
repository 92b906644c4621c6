package web

import (
	"errors"
	"net/http"
	"sync/atomic"
)

// errStarting is the readiness before the wiring reports anything.
var errStarting = errors.New("starting: logs are opening")

// health answers the liveness and readiness probes.
type health struct {
	notReady atomic.Pointer[error] // nil once ready
	// checks are asked, once notReady is nil, on every probe (AddReadyCheck).
	checks atomic.Pointer[[]func() error]
}

func newHealth() *health {
	h := &health{}
	h.set(errStarting)
	return h
}

func (h *health) set(err error) {
	if err == nil {
		h.notReady.Store(nil)
		return
	}
	h.notReady.Store(&err)
}

// serveHealthz answers 200 while the process serves HTTP at all: a
// liveness probe restarts a broker only when this fails.
func (h *health) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// serveReadyz answers 200 once the broker serves clients and 503 with the
// reason before that, so a load balancer or orchestrator sends traffic
// only to brokers that can take it.
func (h *health) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if p := h.notReady.Load(); p != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: " + (*p).Error() + "\n"))
		return
	}
	if cs := h.checks.Load(); cs != nil {
		for _, check := range *cs {
			if err := check(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
				return
			}
		}
	}
	_, _ = w.Write([]byte("ready\n"))
}

// addCheck adds a readiness condition asked on every probe.
func (h *health) addCheck(check func() error) {
	for {
		old := h.checks.Load()
		var next []func() error
		if old != nil {
			next = append(next, *old...)
		}
		next = append(next, check)
		if h.checks.CompareAndSwap(old, &next) {
			return
		}
	}
}
