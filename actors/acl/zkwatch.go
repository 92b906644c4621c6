package acl

import (
	"errors"
	"log/slog"
	"time"

	"github.com/samsa-io/samsa/zkmeta"
)

// Watch follows Kafka's ACL change notifications (both stores) until
// stop closes: each notification names a resource another broker (or
// this one) changed, which is read again from ZooKeeper and published.
// Every broker of a cluster runs it, so an ACL created through one is
// enforced by all. It starts by re-reading the resources of the
// notifications already there, which covers changes made between the
// initial load and the first listing.
//
// A goroutine per store: it blocks on ZooKeeper. A session expiry fires
// the watch; the next listing waits for the new session. Errors are
// retried after a pause.
func (s *ZKStore) Watch(a *Authorizer, log *slog.Logger, stop <-chan struct{}) {
	for _, extended := range []bool{false, true} {
		go s.watch(a, log, extended, stop)
	}
}

func (s *ZKStore) watch(a *Authorizer, log *slog.Logger, extended bool, stop <-chan struct{}) {
	last := ""
	for {
		nodes, changed, err := s.zk.WatchACLChanges(extended)
		if err == nil {
			for _, n := range nodes {
				if n <= last {
					continue // same width, so names sort as their sequence numbers
				}
				if err = s.reload(a, extended, n); errors.Is(err, zkmeta.ErrBadACLChange) {
					log.Warn("skipping an ACL change notification that cannot be read", "node", n, "err", err)
					err = nil
				}
				if err != nil {
					break
				}
				last = n
			}
		}
		if err != nil {
			log.Warn("cannot follow the ACL changes in ZooKeeper; retrying", "err", err)
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

// reload reads the resource one notification names and publishes it.
func (s *ZKStore) reload(a *Authorizer, extended bool, node string) error {
	zr, err := s.zk.ACLChange(extended, node)
	if err != nil {
		if errors.Is(err, zkmeta.ErrNoNode) {
			return nil // purged meanwhile
		}
		return err
	}
	r, es, err := s.read(zr)
	if err != nil {
		return err
	}
	a.Reloaded(map[Resource][]Entry{r: es})
	return nil
}
