package actors

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// TestBrokerOnMemFS: with Options.FS set, every file the broker writes
// goes to that filesystem (logs, the metadata snapshot, producer-id
// blocks, producer-state snapshots, the directory lock), none to the real
// disk; and a crash image of it (only what was fsynced) starts a broker
// that still has the topic, the acknowledged records and the producer's
// sequence.
func TestBrokerOnMemFS(t *testing.T) {
	mem := vfs.NewMemFS()
	dir := filepath.Join(t.TempDir(), "data") // a real path that must stay untouched
	b := startBroker(t, dir, Options{FS: mem})
	createTopicWith(t, b, "m", 1)
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.ProducerID, req.ProducerEpoch = 4, -1, -1
	pid := call(t, b, req).(*kmsg.InitProducerIDResponse).ProducerID
	now := time.Now().UnixMilli()
	mustProduce(t, b, "m", 0, batchtest.Plain(3, now, batchtest.Producer(pid, 0, 0)), 0)
	mustProduce(t, b, "m", 0, batchtest.Plain(2, now, batchtest.Producer(pid, 0, 3)), 3)
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the broker touched the real disk at %s: %v", dir, err)
	}
	names, err := mem.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{LockFileName, "samsa-metadata.json", "samsa-producer-ids", "m-0"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s missing from the MemFS data directory %v", want, names)
		}
	}
	if snaps, _ := mem.List(filepath.Join(dir, "m-0")); !slices.ContainsFunc(snaps, func(n string) bool { return filepath.Ext(n) == ".snapshot" }) {
		t.Errorf("no producer-state snapshot in m-0 on the MemFS: %v", snaps)
	}

	b2 := startBroker(t, dir, Options{FS: mem.CrashClone(nil)})
	if got := listOffset(t, b2, "m", 0, -1); got.Offset != 5 {
		t.Fatalf("after the crash image the log ends at %d, want the 5 acknowledged records", got.Offset)
	}
	// A retry of the last batch is a duplicate, answered with its
	// original offset: the producer state survived too.
	if p := produce(t, b2, -1, "m", 0, batchtest.Plain(2, now, batchtest.Producer(pid, 0, 3))); p.ErrorCode != 0 || p.BaseOffset != 3 {
		t.Fatalf("retry after restart: code %d base %d, want the duplicate's base 3", p.ErrorCode, p.BaseOffset)
	}
}
