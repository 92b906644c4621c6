package actors

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/samsa-io/samsa/segment/vfs"
)

// LockFileName is the lock file in every data directory. Kafka uses the
// same name, so a Kafka broker and samsa cannot share a directory either.
const LockFileName = ".lock"

// ErrDirLocked is returned by NewBroker when another process (a samsa or
// Kafka broker) holds a data directory.
var ErrDirLocked = errors.New("actors: data directory is in use by another broker")

// lockDirsFS takes an exclusive, non-blocking lock (vfs.Lock: flock on
// vfs.OS) on each data directory's lock file, creating directories as
// needed and durably, since the broker's files go in them next. The locks
// last until closed, or the process dies.
func lockDirsFS(fsys vfs.FS, dirs []string) ([]io.Closer, error) {
	var held []io.Closer
	for _, d := range dirs {
		if err := vfs.MkdirAllSync(fsys, d); err != nil {
			releaseLocks(held)
			return nil, fmt.Errorf("actors: data directory: %w", err)
		}
		l, err := vfs.Lock(fsys, filepath.Join(d, LockFileName))
		if err != nil {
			releaseLocks(held)
			if errors.Is(err, vfs.ErrLocked) {
				return nil, fmt.Errorf("%w: %s (stop the other broker, or choose another log.dirs)", ErrDirLocked, d)
			}
			return nil, fmt.Errorf("actors: lock %s: %w", d, err)
		}
		held = append(held, l)
	}
	return held, nil
}

// releaseLocks closes locks taken so far when a later directory fails.
func releaseLocks(cs []io.Closer) {
	for _, c := range cs {
		c.Close()
	}
}
