package actors

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// LockFileName is the lock file in every data directory. Kafka uses the
// same name, so a Kafka broker and samsa cannot share a directory either.
const LockFileName = ".lock"

// ErrDirLocked is returned by NewBroker when another process (a samsa or
// Kafka broker) holds a data directory.
var ErrDirLocked = errors.New("actors: data directory is in use by another broker")

// lockDirs takes an exclusive, non-blocking flock on each data
// directory's lock file (creating directories as needed). The locks last
// until the files are closed, or the process dies.
func lockDirs(dirs []string) ([]*os.File, error) {
	var held []*os.File
	release := func() {
		for _, f := range held {
			f.Close()
		}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			release()
			return nil, fmt.Errorf("actors: data directory: %w", err)
		}
		f, err := os.OpenFile(filepath.Join(d, LockFileName), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			release()
			return nil, fmt.Errorf("actors: lock %s: %w", d, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			release()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w: %s (stop the other broker, or choose another log.dirs)", ErrDirLocked, d)
			}
			return nil, fmt.Errorf("actors: lock %s: %w", d, err)
		}
		held = append(held, f)
	}
	return held, nil
}
