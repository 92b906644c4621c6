package vfs

import (
	"errors"
	"io/fs"
	"path"
	"syscall"
)

// MkdirAllSync is MkdirAll for directories that must survive a crash: it
// also fsyncs the parent of every directory it creates. A new directory's
// entry lives in its parent, so without that a power loss can take the
// directory, and every file later written and fsynced inside it, away.
// Directories that already exist cost one Stat and no fsync.
func MkdirAllSync(fsys FS, dir string) error {
	dir = path.Clean(dir)
	var missing []string // dir first, then its missing parents upwards
	for d := dir; ; d = path.Dir(d) {
		st, err := fsys.Stat(d)
		if err == nil {
			if !st.IsDir {
				return pathErr("mkdir", d, syscall.ENOTDIR)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if path.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(path.Dir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}
