package acl

import (
	"errors"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Authorizer is the broker's authorizer: the current State behind an
// atomic pointer (read by every request without a lock) and the store
// that keeps it. Changes are serialised by a mutex and may block on the
// store, so callers run them off the gnet loops.
type Authorizer struct {
	rules  Rules
	state  atomic.Pointer[State]
	mu     sync.Mutex // serialises changes
	store  Store
	denied *denyLog
}

// New loads the ACLs from store.
func New(rules Rules, store Store, log *slog.Logger, now func() time.Time) (*Authorizer, error) {
	acls, err := store.Load()
	if err != nil {
		return nil, err
	}
	a := &Authorizer{rules: rules, store: store, denied: newDenyLog(log, now)}
	a.state.Store(NewState(acls))
	return a, nil
}

// State is the current set of ACLs.
func (a *Authorizer) State() *State { return a.state.Load() }

// Authorize decides whether principal, connected from clientAddr
// ("ip:port"), may perform op on the resource typ/name; a denial is
// logged (at a bounded rate).
func (a *Authorizer) Authorize(principal, clientAddr string, op Operation, typ ResourceType, name string) bool {
	r := Request{Principal: principal, Host: HostOf(clientAddr), Op: op, Type: typ, Name: name}
	if a.state.Load().Authorize(&a.rules, r) {
		return true
	}
	a.denied.note(r, clientAddr)
	return false
}

// Allowed is Authorize without logging a denial: for filtering lists
// (Metadata of all topics, ListGroups), where Kafka logs nothing either.
func (a *Authorizer) Allowed(principal, clientAddr string, op Operation, typ ResourceType, name string) bool {
	return a.state.Load().Authorize(&a.rules, Request{Principal: principal, Host: HostOf(clientAddr), Op: op, Type: typ, Name: name})
}

// AnyAllowed is State.AnyAllowed for the current ACLs.
func (a *Authorizer) AnyAllowed(principal, clientAddr string, op Operation, typ ResourceType) bool {
	return a.state.Load().AnyAllowed(&a.rules, principal, HostOf(clientAddr), op, typ)
}

// HostOf is the host part of "host:port", the address itself when it
// has no port.
func HostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// Create adds the bindings; errs[i] is binding i's error (nil: created,
// or already there). Invalid bindings are refused one by one; a store
// failure fails every valid one.
func (a *Authorizer) Create(bindings []Binding) (errs []error) {
	errs = make([]error, len(bindings))
	add := make(map[Resource][]Entry)
	for i, b := range bindings {
		if errs[i] = b.Validate(); errs[i] == nil {
			add[b.Resource] = append(add[b.Resource], b.Entry)
		}
	}
	if len(add) == 0 {
		return errs
	}
	changes := make(map[Resource]func([]Entry) []Entry, len(add))
	for r, es := range add {
		changes[r] = func(old []Entry) []Entry {
			out := slices.Clone(old)
			for _, e := range es {
				if !slices.Contains(out, e) {
					out = append(out, e)
				}
			}
			return out
		}
	}
	if err := a.update(changes); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}

// Delete removes the bindings each filter selects; matched[i] are those
// filter i removed, errs[i] its error (an invalid filter, or the store
// failed).
func (a *Authorizer) Delete(filters []Filter) (matched [][]Binding, errs []error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	matched, errs = make([][]Binding, len(filters)), make([]error, len(filters))
	gone := make(map[Resource][]Entry)
	st := a.state.Load()
	for i, f := range filters {
		if errs[i] = f.Validate(); errs[i] != nil {
			continue
		}
		matched[i] = st.Bindings(f)
		for _, b := range matched[i] {
			gone[b.Resource] = append(gone[b.Resource], b.Entry)
		}
	}
	if len(gone) == 0 {
		return matched, errs
	}
	changes := make(map[Resource]func([]Entry) []Entry, len(gone))
	for r, es := range gone {
		changes[r] = func(old []Entry) []Entry {
			return slices.DeleteFunc(slices.Clone(old), func(e Entry) bool { return slices.Contains(es, e) })
		}
	}
	if err := a.updateLocked(changes); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i], matched[i] = err, nil
			}
		}
	}
	return matched, errs
}

// ErrStore marks a change that failed because the store did (the disk,
// ZooKeeper), not because the request was wrong.
var ErrStore = errors.New("the ACLs could not be stored")

func (a *Authorizer) update(changes map[Resource]func([]Entry) []Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.updateLocked(changes)
}

func (a *Authorizer) updateLocked(changes map[Resource]func([]Entry) []Entry) error {
	stored, err := a.store.Update(changes)
	if err != nil {
		return errors.Join(ErrStore, err)
	}
	a.state.Store(a.state.Load().With(stored))
	return nil
}

// Reloaded publishes entries read from the store for resources another
// broker changed (cluster mode's change notifications).
func (a *Authorizer) Reloaded(changed map[Resource][]Entry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state.Store(a.state.Load().With(changed))
}
