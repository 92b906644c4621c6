package acl

import (
	"log/slog"
	"sync"
	"time"
)

// denyLog logs denied operations at a bounded rate: a client retrying a
// denied produce in a tight loop must not flood the log. At most
// denyBurst lines per denyWindow; the lines suppressed are counted in
// the next one logged.
type denyLog struct {
	log        *slog.Logger
	now        func() time.Time
	mu         sync.Mutex
	windowFrom time.Time
	logged     int
	suppressed int
}

const (
	denyWindow = 10 * time.Second
	denyBurst  = 10
)

func newDenyLog(log *slog.Logger, now func() time.Time) *denyLog {
	if now == nil {
		now = time.Now
	}
	return &denyLog{log: log, now: now}
}

// note logs one denial unless the window's budget is spent.
func (d *denyLog) note(r Request, clientAddr string) {
	if d.log == nil {
		return
	}
	d.mu.Lock()
	t := d.now()
	if t.Sub(d.windowFrom) >= denyWindow {
		d.windowFrom, d.logged = t, 0
	}
	if d.logged >= denyBurst {
		d.suppressed++
		d.mu.Unlock()
		return
	}
	d.logged++
	suppressed := d.suppressed
	d.suppressed = 0
	d.mu.Unlock()
	d.log.Info("operation denied by ACLs", "principal", r.Principal, "client", clientAddr, "operation", r.Op.String(),
		"resource_type", r.Type.String(), "resource", r.Name, "denials_not_logged", suppressed)
}
