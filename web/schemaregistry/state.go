package schemaregistry

import (
	"encoding/json"
	"slices"
	"sort"
)

// Version is one registered version of a subject.
type Version struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	Schema     string      `json:"schema"`
	Deleted    bool        `json:"-"`
}

// content is a schema as the registry identifies it: the same content
// under any subject has the same id.
type content struct {
	schemaType string
	schema     string
	refs       string // the references, as JSON
}

func contentOf(schemaType, schema string, refs []Reference) content {
	if schemaType == "" {
		schemaType = typeAvro
	}
	r := ""
	if len(refs) > 0 {
		r = string(mustJSON(refs))
	}
	return content{schemaType: schemaType, schema: schema, refs: r}
}

// state is the registry as the `_schemas` records written so far make it.
// It is the pure core: apply folds one record in, the queries read it;
// the caller holds the lock.
type state struct {
	subjects  map[string]map[int]*Version // subject → version → entry
	ids       map[int]*Version            // id → first entry seen with it (schema, type, references)
	idUses    map[int]int                 // id → how many entries (soft-deleted too) use it
	byContent map[content]int             // content → id
	maxID     int
	// settings holds, by key type (CONFIG, MODE), each subject's ("" the
	// global) value.
	settings map[string]map[string]string
}

func newState() *state {
	return &state{
		subjects:  map[string]map[int]*Version{},
		ids:       map[int]*Version{},
		idUses:    map[int]int{},
		byContent: map[content]int{},
		settings:  map[string]map[string]string{keyConfig: {}, keyMode: {}},
	}
}

// apply folds one `_schemas` record into the state. Records it cannot
// read (another registry's newer key types, garbage) are skipped: the log
// is shared, and one bad record must not stop the registry.
func (s *state) apply(key, value []byte) {
	var k recordKey
	if json.Unmarshal(key, &k) != nil {
		return
	}
	subject := ""
	if k.Subject != nil {
		subject = *k.Subject
	}
	switch k.KeyType {
	case keySchema:
		if k.Version == nil {
			return
		}
		if value == nil {
			s.removeVersion(subject, *k.Version)
			return
		}
		var v schemaValue
		if json.Unmarshal(value, &v) != nil || v.ID <= 0 {
			return
		}
		s.putVersion(v)
	case keyConfig:
		s.applySetting(compatibilitySetting, subject, value)
	case keyMode:
		s.applySetting(modeSetting, subject, value)
	case keyDeleteSubject:
		var v deleteSubjectValue
		if value == nil || json.Unmarshal(value, &v) != nil {
			return
		}
		for n, e := range s.subjects[v.Subject] {
			if n <= v.Version {
				e.Deleted = true
			}
		}
	case keyClearSubject:
		var v clearSubjectValue
		if value == nil || json.Unmarshal(value, &v) != nil {
			return
		}
		for n, e := range s.subjects[v.Subject] {
			if e.Deleted {
				s.removeVersion(v.Subject, n)
			}
		}
	}
}

func (s *state) putVersion(v schemaValue) {
	versions := s.subjects[v.Subject]
	if versions == nil {
		versions = map[int]*Version{}
		s.subjects[v.Subject] = versions
	}
	if old := versions[v.Version.Version]; old != nil {
		s.release(old.ID)
	}
	e := &Version{}
	*e = v.Version
	e.Deleted = v.Deleted
	if e.SchemaType == "" {
		e.SchemaType = typeAvro
	}
	versions[e.Version] = e
	if s.ids[v.ID] == nil {
		s.ids[v.ID] = e
		s.byContent[contentOf(e.SchemaType, e.Schema, e.References)] = v.ID
	}
	s.idUses[v.ID]++
	s.maxID = max(s.maxID, v.ID)
}

func (s *state) removeVersion(subject string, version int) {
	versions := s.subjects[subject]
	e := versions[version]
	if e == nil {
		return
	}
	delete(versions, version)
	if len(versions) == 0 {
		delete(s.subjects, subject)
	}
	s.release(e.ID)
}

// release drops one use of id; an id no entry uses is forgotten (but
// maxID stays, so it is never handed out again for other content).
func (s *state) release(id int) {
	s.idUses[id]--
	if s.idUses[id] > 0 {
		return
	}
	if e := s.ids[id]; e != nil {
		delete(s.byContent, contentOf(e.SchemaType, e.Schema, e.References))
	}
	delete(s.ids, id)
	delete(s.idUses, id)
}

// versions lists the subject's versions in order, soft-deleted ones only
// when deleted is set.
func (s *state) versions(subject string, deleted bool) []*Version {
	var out []*Version
	for _, e := range s.subjects[subject] {
		if deleted || !e.Deleted {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// latest is the subject's newest live version, nil if it has none.
func (s *state) latest(subject string) *Version {
	vs := s.versions(subject, false)
	if len(vs) == 0 {
		return nil
	}
	return vs[len(vs)-1]
}

// nextVersion numbers a new version after every one the subject has,
// soft-deleted ones included, as Confluent does.
func (s *state) nextVersion(subject string) int {
	n := 0
	for v := range s.subjects[subject] {
		n = max(n, v)
	}
	return n + 1
}

func (s *state) subjectNames(deleted bool) []string {
	var out []string
	for name := range s.subjects {
		if len(s.versions(name, deleted)) > 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// referencedBy lists the live entries whose references point at
// subject's version.
func (s *state) referencedBy(subject string, version int) []*Version {
	var out []*Version
	for _, versions := range s.subjects {
		for _, e := range versions {
			if e.Deleted {
				continue
			}
			for _, r := range e.References {
				if r.Subject == subject && r.Version == version {
					out = append(out, e)
				}
			}
		}
	}
	return out
}
