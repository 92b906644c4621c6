package acl

import (
	"log/slog"
	"sync"
	"time"
)

// denyLog logs denied operations at a bounded rate, per principal,
// operation and resource: a client retrying a denied produce in a tight
// loop logs one line per denyWindow, and does not hide another
// principal's denial. The repeats not logged are counted in the next line
// of the same denial. Over all denials at most denyBurst lines are logged
// per window (a client probing many resources); those are counted in the
// next line logged.
type denyLog struct {
	log        *slog.Logger
	now        func() time.Time
	mu         sync.Mutex
	windowFrom time.Time
	logged     int
	// seen are the denials of this window, with how many of each were
	// not logged; carried are the last window's counts not yet reported.
	seen, carried map[denial]int
	// others counts denials past denyKeys distinct ones in a window,
	// reported with the next line.
	others int
}

// denial is what a line of the deny log is about.
type denial struct {
	principal string
	op        Operation
	typ       ResourceType
	name      string
}

const (
	denyWindow = 10 * time.Second
	denyBurst  = 10
	// denyKeys bounds the distinct denials remembered per window.
	denyKeys = 4096
)

func newDenyLog(log *slog.Logger, now func() time.Time) *denyLog {
	if now == nil {
		now = time.Now
	}
	return &denyLog{log: log, now: now, seen: map[denial]int{}, carried: map[denial]int{}}
}

// note logs one denial unless it was logged in this window already or
// the window's budget is spent.
func (d *denyLog) note(r Request, clientAddr string) {
	if d.log == nil {
		return
	}
	k := denial{principal: r.Principal, op: r.Op, typ: r.Type, name: r.Name}
	d.mu.Lock()
	if t := d.now(); t.Sub(d.windowFrom) >= denyWindow {
		d.windowFrom, d.logged, d.carried = t, 0, map[denial]int{}
		for k, n := range d.seen {
			if n > 0 {
				d.carried[k] = n
			}
		}
		d.seen = map[denial]int{}
	}
	n, seen := d.seen[k]
	if seen || d.logged >= denyBurst {
		if seen || len(d.seen) < denyKeys {
			d.seen[k] = n + 1
		} else {
			d.others++
		}
		d.mu.Unlock()
		return
	}
	d.logged++
	d.seen[k] = 0
	suppressed, others := d.carried[k], d.others
	delete(d.carried, k)
	d.others = 0
	d.mu.Unlock()
	d.log.Info("operation denied by ACLs", "principal", r.Principal, "client", clientAddr, "operation", r.Op.String(),
		"resource_type", r.Type.String(), "resource", r.Name, "denials_not_logged", suppressed, "other_denials_not_logged", others)
}
