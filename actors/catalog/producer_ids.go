package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/samsa-io/samsa/segment/vfs"
)

// producerIDFile holds, in every data directory, the start of the next
// block of producer ids not yet handed out. Text, one line:
//
//	samsa-producer-ids 1 <next block start>
//
// Ids are handed out from a block of producerIDBlock; the file is
// advanced (atomically, in every directory) before the first id of a
// block is used, so ids stay unique across restarts and crashes: a
// restart skips the rest of the block in use. On load the largest value
// found in any directory wins (a directory may have missed the last
// write, or be new).
const (
	producerIDFile   = "samsa-producer-ids"
	producerIDBlock  = 1000
	producerIDHeader = "samsa-producer-ids 1 "
)

// ProducerIDs allocates producer ids (InitProducerId). The zero value is
// ready: it loads its state on first use, from fs (nil: vfs.OS; tests
// set a MemFS to crash it). Safe for concurrent use; the metadata actor
// is its only caller.
type ProducerIDs struct {
	mu     sync.Mutex
	fs     vfs.FS
	loaded bool
	next   int64 // the next id to hand out
	limit  int64 // ids below limit are covered by the file
}

// NewProducerIDs allocates ids from blocks kept on fs.
func NewProducerIDs(fs vfs.FS) *ProducerIDs { return &ProducerIDs{fs: fs} }

// errProducerIDsExhausted: the int64 id space is used up (not in practice).
var errProducerIDsExhausted = errors.New("catalog: producer ids exhausted")

// allocate returns a new producer id, persisting a new block when the
// current one is used up.
func (a *ProducerIDs) allocate(dirs []string) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fsys := a.fs
	if fsys == nil {
		fsys = vfs.OS
	}
	if !a.loaded {
		start, err := loadProducerIDBlock(fsys, dirs)
		if err != nil {
			return -1, err
		}
		a.next, a.limit, a.loaded = start, start, true
	}
	if a.next >= a.limit {
		limit := a.next + producerIDBlock
		if limit < 0 {
			return -1, errProducerIDsExhausted
		}
		if err := saveProducerIDBlock(fsys, dirs, limit); err != nil {
			return -1, err
		}
		a.limit = limit
	}
	id := a.next
	a.next++
	return id, nil
}

func loadProducerIDBlock(fsys vfs.FS, dirs []string) (int64, error) {
	var start int64
	for _, d := range dirs {
		data, err := vfs.ReadFile(fsys, filepath.Join(d, producerIDFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("catalog: read producer id block: %w", err)
		}
		line := strings.TrimSpace(string(data))
		v, err := strconv.ParseInt(strings.TrimPrefix(line, producerIDHeader), 10, 64)
		if !strings.HasPrefix(line, producerIDHeader) || err != nil || v < 0 {
			return 0, fmt.Errorf("catalog: %s in %s is malformed (%q); fix or remove it only if no producer ids are in use",
				producerIDFile, d, line)
		}
		start = max(start, v)
	}
	return start, nil
}

func saveProducerIDBlock(fsys vfs.FS, dirs []string, next int64) error {
	data := []byte(producerIDHeader + strconv.FormatInt(next, 10) + "\n")
	for _, d := range dirs {
		if err := vfs.WriteFileAtomic(fsys, filepath.Join(d, producerIDFile), data); err != nil {
			return fmt.Errorf("catalog: persist producer id block: %w", err)
		}
	}
	return nil
}
