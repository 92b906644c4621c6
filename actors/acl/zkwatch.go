package acl

import (
	"errors"
	"log/slog"
	"time"

	"github.com/samsa-io/samsa/zkmeta"
)

// changeExpiry is how old a change notification gets before the brokers
// delete it (Kafka's changeExpirationMs, 15 minutes). A broker away
// longer still catches up: its start loads every ACL.
const changeExpiry = 15 * time.Minute

// Watch follows Kafka's ACL change notifications (both stores) until
// stop closes: each notification names a resource another broker (or
// this one) changed, which is read again from ZooKeeper and published.
// Every broker of a cluster runs it, so an ACL created through one is
// enforced by all. It starts by re-reading the resources of the
// notifications already there, which covers changes made between the
// initial load and the first listing; notifications older than
// changeExpiry are deleted after each pass, as Kafka's brokers do.
//
// A goroutine per store: it blocks on ZooKeeper. A session expiry fires
// the watch; the next listing waits for the new session. Errors are
// retried after a pause.
func (s *ZKStore) Watch(a *Authorizer, log *slog.Logger, stop <-chan struct{}) {
	for _, extended := range []bool{false, true} {
		w := &changeWatch{s: s, a: a, log: log, extended: extended, created: map[string]time.Time{}}
		go w.run(stop)
	}
}

// changeWatch follows one store's notifications.
type changeWatch struct {
	s        *ZKStore
	a        *Authorizer
	log      *slog.Logger
	extended bool
	last     string               // newest notification processed
	created  map[string]time.Time // notifications seen: when made
}

func (w *changeWatch) run(stop <-chan struct{}) {
	for {
		changed, err := w.pass()
		if err != nil {
			w.log.Warn("cannot follow the ACL changes in ZooKeeper; retrying", "err", err)
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
				continue
			}
		}
		select {
		case <-stop:
			return
		case <-changed:
		}
	}
}

// pass processes the notifications newer than the last one processed,
// purges the expired, and returns the re-armed watch.
func (w *changeWatch) pass() (<-chan struct{}, error) {
	nodes, changed, err := w.s.zk.WatchACLChanges(w.extended)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n <= w.last {
			continue // same width, so names sort as their sequence numbers
		}
		if err := w.reload(n); err != nil {
			return nil, err
		}
		w.last = n
	}
	now := time.Now()
	for n, at := range w.created {
		if now.Sub(at) > changeExpiry {
			if err := w.s.zk.DeleteACLChange(w.extended, n); err != nil {
				return nil, err
			}
			delete(w.created, n)
		}
	}
	return changed, nil
}

// reload reads the resource one notification names and publishes it. A
// notification that cannot be read is skipped (no retry mends it).
func (w *changeWatch) reload(node string) error {
	zr, at, err := w.s.zk.ACLChange(w.extended, node)
	switch {
	case errors.Is(err, zkmeta.ErrNoNode):
		return nil // purged meanwhile
	case errors.Is(err, zkmeta.ErrBadACLChange):
		w.log.Warn("skipping an ACL change notification that cannot be read", "node", node, "err", err)
		w.created[node] = at
		return nil
	case err != nil:
		return err
	}
	w.created[node] = at
	r, es, err := w.s.read(zr)
	if err != nil {
		return err
	}
	w.a.Reloaded(map[Resource][]Entry{r: es})
	return nil
}
