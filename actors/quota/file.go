package quota

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/samsa-io/samsa/segment/vfs"
)

// File is where a single-node broker keeps its client quotas, in its
// first data directory.
const File = "samsa-client-quotas.json"

type fileJSON struct {
	Version  int         `json:"version"`
	Entities []fileEntry `json:"entities"`
}

type fileEntry struct {
	Entity map[string]*string `json:"entity"` // type -> name, null: <default>
	Config map[string]float64 `json:"config"`
}

// LoadFile reads the quotas persisted in dir (none yet: empty).
func LoadFile(fsys vfs.FS, dir string) (Configs, error) {
	name := filepath.Join(dir, File)
	b, err := vfs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return Configs{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("quota: reading %s: %w", name, err)
	}
	var f fileJSON
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("quota: %s is not valid JSON: %w", name, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("quota: %s has version %d; this broker reads version 1", name, f.Version)
	}
	out := Configs{}
	for _, en := range f.Entities {
		var e Entity
		for typ, n := range en.Entity {
			p := DefaultPart()
			if n != nil {
				p = Named(*n)
			}
			switch typ {
			case TypeUser:
				e.User = p
			case TypeClientID:
				e.Client = p
			case TypeIP:
				e.IP = p
			default:
				return nil, fmt.Errorf("quota: %s: unknown entity type %q", name, typ)
			}
		}
		if len(en.Config) > 0 {
			out[e] = en.Config
		}
	}
	return out, nil
}

// FilePersist persists every change by rewriting dir's quota file
// atomically (temporary file, fsync, rename, directory fsync).
func FilePersist(fsys vfs.FS, dir string) Persist {
	name := filepath.Join(dir, File)
	return func(_ []Entity, all Configs) error {
		f := fileJSON{Version: 1, Entities: []fileEntry{}}
		for e, cfg := range all {
			en := fileEntry{Entity: map[string]*string{}, Config: cfg}
			if e.User.Present {
				en.Entity[TypeUser] = e.User.Ptr()
			}
			if e.Client.Present {
				en.Entity[TypeClientID] = e.Client.Ptr()
			}
			if e.IP.Present {
				en.Entity[TypeIP] = e.IP.Ptr()
			}
			f.Entities = append(f.Entities, en)
		}
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		if err := vfs.WriteFileAtomic(fsys, name, b); err != nil {
			return fmt.Errorf("quota: writing %s: %w", name, err)
		}
		return nil
	}
}
