package sasl

import (
	"maps"
	"slices"
	"sync"
)

// Users maps a user name to its SCRAM credentials by mechanism.
type Users map[string]map[string]Credential

// Persist makes a change durable before the store serves it: changed are
// the users whose credentials changed, all is every user's afterwards. A
// file store rewrites all; ZooKeeper writes changed.
type Persist func(changed []string, all Users) error

// Store holds the SCRAM credentials: read by every exchange, changed by
// AlterUserScramCredentials and, in a cluster, by other brokers' changes
// read from ZooKeeper. Safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	users   Users
	persist Persist
	// alter serialises Alter calls, so that persisted states follow one
	// another in the order they were made, without holding mu (and so
	// blocking lookups) across disk or network writes.
	alter sync.Mutex
}

// NewStore is a store holding users, persisting changes through persist
// (nil: kept in memory only).
func NewStore(users Users, persist Persist) *Store {
	if users == nil {
		users = Users{}
	}
	return &Store{users: users, persist: persist}
}

// Lookup is user's credential for mech.
func (s *Store) Lookup(user, mech string) (Credential, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.users[user][mech]
	return c, ok
}

// Mechanisms are the mechanisms user has a credential for, with their
// iterations, in Kafka's mechanism order; ok is false for a user without
// any.
func (s *Store) Mechanisms(user string) (iterations map[string]int, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	creds := s.users[user]
	if len(creds) == 0 {
		return nil, false
	}
	iterations = map[string]int{}
	for m, c := range creds {
		iterations[m] = c.Iterations
	}
	return iterations, true
}

// UserNames lists the users with credentials, sorted.
func (s *Store) UserNames() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.users))
}

// Change is one credential change: Cred set for User and Mechanism, or
// deleted when Delete.
type Change struct {
	User, Mechanism string
	Delete          bool
	Cred            Credential
}

// Alter applies changes, persists them, and only then serves them. On a
// persist failure nothing changes.
func (s *Store) Alter(changes []Change) error {
	s.alter.Lock()
	defer s.alter.Unlock()
	s.mu.RLock()
	next := s.cloneLocked()
	s.mu.RUnlock()
	var changed []string
	for _, c := range changes {
		if !slices.Contains(changed, c.User) {
			changed = append(changed, c.User)
		}
		if c.Delete {
			delete(next[c.User], c.Mechanism)
			if len(next[c.User]) == 0 {
				delete(next, c.User)
			}
			continue
		}
		if next[c.User] == nil {
			next[c.User] = map[string]Credential{}
		}
		next[c.User][c.Mechanism] = c.Cred
	}
	if s.persist != nil {
		if err := s.persist(changed, next); err != nil {
			return err
		}
	}
	// Only the changed users are swapped in: a Replace from another
	// broker that landed while persisting stays.
	s.mu.Lock()
	for _, u := range changed {
		if creds, ok := next[u]; ok {
			s.users[u] = creds
		} else {
			delete(s.users, u)
		}
	}
	s.mu.Unlock()
	return nil
}

// Replace sets user's credentials as another broker wrote them (creds
// empty: the user has none). Nothing is persisted: it already is.
func (s *Store) Replace(user string, creds map[string]Credential) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(creds) == 0 {
		delete(s.users, user)
		return
	}
	s.users[user] = creds
}

// Snapshot is a copy of every user's credentials.
func (s *Store) Snapshot() Users {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cloneLocked()
}

func (s *Store) cloneLocked() Users {
	out := make(Users, len(s.users))
	for u, creds := range s.users {
		out[u] = maps.Clone(creds)
	}
	return out
}
