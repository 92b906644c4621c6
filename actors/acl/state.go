package acl

import (
	"maps"
	"slices"
	"sort"
)

// State is the set of ACLs, indexed by resource pattern. A State is never
// changed once built: With returns a new one, so readers need no lock.
type State struct {
	acls map[Resource][]Entry
	// prefixed lists, per resource type, the PREFIXED patterns that
	// have entries: a name is checked against each.
	prefixed map[ResourceType][]string
}

// NewState indexes acls (resource pattern to its entries).
func NewState(acls map[Resource][]Entry) *State {
	s := &State{acls: make(map[Resource][]Entry, len(acls)), prefixed: make(map[ResourceType][]string)}
	for r, es := range acls {
		if len(es) > 0 {
			s.acls[r] = es
		}
	}
	s.index()
	return s
}

func (s *State) index() {
	for r := range s.acls {
		if r.Pattern == PatternPrefixed {
			s.prefixed[r.Type] = append(s.prefixed[r.Type], r.Name)
		}
	}
	for _, names := range s.prefixed {
		sort.Strings(names)
	}
}

// With returns a State whose entries for each resource in changed are
// those given (none: the resource has no ACLs any more).
func (s *State) With(changed map[Resource][]Entry) *State {
	acls := maps.Clone(s.acls)
	for r, es := range changed {
		if len(es) == 0 {
			delete(acls, r)
		} else {
			acls[r] = es
		}
	}
	return NewState(acls)
}

// Entries are the entries stored for exactly the pattern r.
func (s *State) Entries(r Resource) []Entry { return s.acls[r] }

// Bindings lists the bindings the filter selects, in a stable order.
func (s *State) Bindings(f Filter) []Binding {
	var out []Binding
	for r, es := range s.acls {
		if !f.MatchesResource(r) {
			continue
		}
		for _, e := range es {
			if f.MatchesEntry(e) {
				out = append(out, Binding{Resource: r, Entry: e})
			}
		}
	}
	slices.SortFunc(out, compareBindings)
	return out
}

// Len is the number of bindings.
func (s *State) Len() int {
	n := 0
	for _, es := range s.acls {
		n += len(es)
	}
	return n
}

// Resources lists every resource pattern with entries.
func (s *State) Resources() []Resource { return slices.Collect(maps.Keys(s.acls)) }

func compareBindings(a, b Binding) int {
	switch {
	case a.Resource.Type != b.Resource.Type:
		return int(a.Resource.Type) - int(b.Resource.Type)
	case a.Resource.Pattern != b.Resource.Pattern:
		return int(a.Resource.Pattern) - int(b.Resource.Pattern)
	case a.Resource.Name != b.Resource.Name:
		return cmpString(a.Resource.Name, b.Resource.Name)
	case a.Entry.Principal != b.Entry.Principal:
		return cmpString(a.Entry.Principal, b.Entry.Principal)
	case a.Entry.Host != b.Entry.Host:
		return cmpString(a.Entry.Host, b.Entry.Host)
	case a.Entry.Op != b.Entry.Op:
		return int(a.Entry.Op) - int(b.Entry.Op)
	}
	return int(a.Entry.Perm) - int(b.Entry.Perm)
}

func cmpString(a, b string) int {
	if a < b {
		return -1
	}
	return 1
}
