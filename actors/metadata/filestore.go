package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FileName is the metadata snapshot's file name inside a data directory.
// It cannot be mistaken for a partition directory (those end in -N).
const FileName = "samsa-metadata.json"

// FileStore saves snapshots as JSON in one file, atomically: write a
// temporary file, fsync it, rename it over the old one, fsync the
// directory. A crash leaves either the old or the new snapshot.
type FileStore struct {
	Path string
}

// Save writes s durably.
func (f *FileStore) Save(s *Snapshot) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("metadata: encode snapshot: %w", err)
	}
	dir := filepath.Dir(f.Path)
	tmp, err := os.CreateTemp(dir, FileName+".tmp-*")
	if err != nil {
		return fmt.Errorf("metadata: save: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("metadata: save %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("metadata: fsync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("metadata: save %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("metadata: save: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("metadata: fsync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("metadata: fsync dir %s: %w", dir, err)
	}
	return nil
}

// Open finds the snapshot among the data directories (creating them as
// needed) and returns its store and contents; a nil snapshot means a fresh
// broker, whose snapshot will live in the first directory.
func Open(dirs []string) (*FileStore, *Snapshot, error) {
	var found []string
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, fmt.Errorf("metadata: data directory: %w", err)
		}
		p := filepath.Join(d, FileName)
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("metadata: %w", err)
		}
	}
	switch len(found) {
	case 0:
		return &FileStore{Path: filepath.Join(dirs[0], FileName)}, nil, nil
	case 1:
	default:
		return nil, nil, fmt.Errorf("metadata: several data directories hold %s (%v); keep the right one", FileName, found)
	}
	data, err := os.ReadFile(found[0])
	if err != nil {
		return nil, nil, fmt.Errorf("metadata: %w", err)
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, nil, fmt.Errorf("metadata: %s is damaged: %w", found[0], err)
	}
	return &FileStore{Path: found[0]}, &s, nil
}
