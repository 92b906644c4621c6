package acl

// Store keeps the ACLs durably: the data directory alone, ZooKeeper in
// cluster mode (shared with the other brokers, Kafka's layout).
type Store interface {
	// Load reads every ACL.
	Load() (map[Resource][]Entry, error)
	// Update applies each change to the stored entries of its resource
	// (change gets the stored entries and returns the new ones; none
	// removes the resource) and returns what is stored afterwards. A
	// store shared with other writers reads the current entries under
	// the change, so two brokers' changes to one resource both land.
	Update(changes map[Resource]func([]Entry) []Entry) (map[Resource][]Entry, error)
}

// MemStore is a Store in memory only, for tests.
type MemStore struct{ acls map[Resource][]Entry }

// Load is Store's.
func (m *MemStore) Load() (map[Resource][]Entry, error) { return m.acls, nil }

// Update is Store's.
func (m *MemStore) Update(changes map[Resource]func([]Entry) []Entry) (map[Resource][]Entry, error) {
	if m.acls == nil {
		m.acls = make(map[Resource][]Entry)
	}
	return applyChanges(m.acls, changes), nil
}

// applyChanges applies changes to acls in place and returns the changed
// resources' new entries.
func applyChanges(acls map[Resource][]Entry, changes map[Resource]func([]Entry) []Entry) map[Resource][]Entry {
	out := make(map[Resource][]Entry, len(changes))
	for r, change := range changes {
		es := change(acls[r])
		if len(es) == 0 {
			delete(acls, r)
		} else {
			acls[r] = es
		}
		out[r] = es
	}
	return out
}
