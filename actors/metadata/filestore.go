package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/samsa-io/samsa/segment/vfs"
)

// FileName is the metadata snapshot's file name inside a data directory.
// It cannot be mistaken for a partition directory (those end in -N).
const FileName = "samsa-metadata.json"

// FileStore saves snapshots as JSON in one file, atomically
// (vfs.WriteFileAtomic: write a temporary file, fsync it, rename it over
// the old one, fsync the directory). A crash leaves either the old or the
// new snapshot.
type FileStore struct {
	Path string
	// FS is the filesystem Path is on; nil means vfs.OS. Tests put a
	// vfs.MemFS here to crash the store.
	FS vfs.FS
}

func (f *FileStore) fs() vfs.FS {
	if f.FS == nil {
		return vfs.OS
	}
	return f.FS
}

// Save writes s durably.
func (f *FileStore) Save(s *Snapshot) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("metadata: encode snapshot: %w", err)
	}
	if err := vfs.WriteFileAtomic(f.fs(), f.Path, append(data, '\n')); err != nil {
		return fmt.Errorf("metadata: save %s: %w", f.Path, err)
	}
	return nil
}

// Open is OpenFS on the operating system's filesystem.
func Open(dirs []string) (*FileStore, *Snapshot, error) {
	return OpenFS(vfs.OS, dirs)
}

// OpenFS finds the snapshot among the data directories on fsys (creating
// them as needed) and returns its store and contents; a nil snapshot
// means a fresh broker, whose snapshot will live in the first directory.
// New directories are created durably (vfs.MkdirAllSync): a snapshot
// fsynced into a directory whose own entry a crash can lose is not
// durable.
func OpenFS(fsys vfs.FS, dirs []string) (*FileStore, *Snapshot, error) {
	var found []string
	for _, d := range dirs {
		if err := vfs.MkdirAllSync(fsys, d); err != nil {
			return nil, nil, fmt.Errorf("metadata: data directory: %w", err)
		}
		p := filepath.Join(d, FileName)
		if _, err := fsys.Stat(p); err == nil {
			found = append(found, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("metadata: %w", err)
		}
	}
	switch len(found) {
	case 0:
		return &FileStore{Path: filepath.Join(dirs[0], FileName), FS: fsys}, nil, nil
	case 1:
	default:
		return nil, nil, fmt.Errorf("metadata: several data directories hold %s (%v); keep the right one", FileName, found)
	}
	data, err := vfs.ReadFile(fsys, found[0])
	if err != nil {
		return nil, nil, fmt.Errorf("metadata: %w", err)
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, nil, fmt.Errorf("metadata: %s is damaged: %w", found[0], err)
	}
	return &FileStore{Path: found[0], FS: fsys}, &s, nil
}
