package acl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/samsa-io/samsa/segment/vfs"
)

// FileName is the file, in the first log directory, that holds a single
// broker's ACLs: JSON, a list of bindings.
const FileName = "samsa-acls.json"

// FileStore keeps the ACLs in one file, rewritten whole on each change
// (temporary file, fsync, rename, fsync of the directory), so a crash
// leaves either the old set or the new one. ACL changes are rare and
// sets small.
type FileStore struct {
	fsys vfs.FS
	path string
	mu   sync.Mutex
	acls map[Resource][]Entry
}

// NewFileStore keeps the ACLs in dir, through fsys (the broker's
// filesystem, so crash tests reach it too).
func NewFileStore(fsys vfs.FS, dir string) *FileStore {
	return &FileStore{fsys: fsys, path: filepath.Join(dir, FileName)}
}

// fileBinding is one binding in the file, in Kafka's names.
type fileBinding struct {
	ResourceType string `json:"resourceType"`
	Name         string `json:"name"`
	PatternType  string `json:"patternType"`
	aclJSON
}

// Load is Store's: no file is no ACLs.
func (f *FileStore) Load() (map[Resource][]Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acls = make(map[Resource][]Entry)
	b, err := vfs.ReadFile(f.fsys, f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f.acls, nil
	}
	if err != nil {
		return nil, err
	}
	var list []fileBinding
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", f.path, err)
	}
	for _, fb := range list {
		typ, ok := ParseResourceType(fb.ResourceType)
		pat, okp := parsePattern(fb.PatternType)
		e, err := fb.entry()
		if !ok || !okp || err != nil {
			return nil, fmt.Errorf("%s: bad binding %+v", f.path, fb)
		}
		r := Resource{Type: typ, Name: fb.Name, Pattern: pat}
		f.acls[r] = append(f.acls[r], e)
	}
	return f.acls, nil
}

// Update is Store's.
func (f *FileStore) Update(changes map[Resource]func([]Entry) []Entry) (map[Resource][]Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	next := make(map[Resource][]Entry, len(f.acls))
	for r, es := range f.acls {
		next[r] = es
	}
	out := applyChanges(next, changes)
	if err := f.write(next); err != nil {
		return nil, err
	}
	f.acls = next
	return out, nil
}

func (f *FileStore) write(acls map[Resource][]Entry) error {
	list := make([]fileBinding, 0, len(acls))
	for _, b := range NewState(acls).Bindings(Filter{Type: ResourceAny, Pattern: PatternAny, Op: OpAny, Perm: PermAny}) {
		list = append(list, fileBinding{ResourceType: b.Resource.Type.String(), Name: b.Resource.Name,
			PatternType: patternName(b.Resource.Pattern), aclJSON: toACLJSON(b.Entry)})
	}
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return vfs.WriteFileAtomic(f.fsys, f.path, data)
}

func patternName(p PatternType) string {
	if p == PatternPrefixed {
		return "PREFIXED"
	}
	return "LITERAL"
}

func parsePattern(s string) (PatternType, bool) {
	switch s {
	case "LITERAL":
		return PatternLiteral, true
	case "PREFIXED":
		return PatternPrefixed, true
	}
	return PatternUnknown, false
}
