package catalog

import (
	"errors"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

var pidDirs = []string{"/data/a", "/data/b"}

// pidCrash is one crash image and the largest id handed out (allocate
// returned it) when the crash struck.
type pidCrash struct {
	img    vfs.CrashImage
	issued int64
}

// checkPIDCrashes restarts on every image: the first id it hands out must
// be above every id handed out before the crash, so no id repeats.
func checkPIDCrashes(t *testing.T, crashes []pidCrash) {
	t.Helper()
	for _, c := range crashes {
		restarted := ProducerIDs{fs: c.img.FS}
		id, err := restarted.allocate(pidDirs)
		if err != nil {
			t.Fatalf("crash %s (point %d, seed %d): restart: %v", c.img.Where, c.img.Point, c.img.Seed, err)
		}
		if id <= c.issued {
			t.Fatalf("crash %s (point %d, seed %d): first id after the restart %d, but %d was handed out before",
				c.img.Where, c.img.Point, c.img.Seed, id, c.issued)
		}
	}
}

func newPIDFS(t *testing.T) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMemFS()
	for _, d := range pidDirs { // the directories, as NewBroker's lock makes them
		if err := vfs.MkdirAllSync(mem, d); err != nil {
			t.Fatal(err)
		}
	}
	return mem
}

// TestProducerIDsCrashAtEveryStep hands out three blocks' worth of ids on
// a MemFS and crashes at every filesystem operation, in every fate of the
// unsynced bytes.
func TestProducerIDsCrashAtEveryStep(t *testing.T) {
	mem := newPIDFS(t)
	ids := ProducerIDs{fs: mem}
	issued := int64(-1)
	var crashes []pidCrash
	mem.CrashPoints([]uint64{1, 2, 3, 4}, func() {
		for range 3*producerIDBlock + 10 {
			id, err := ids.allocate(pidDirs)
			if err != nil {
				t.Fatal(err)
			}
			if id != issued+1 {
				t.Fatalf("id %d after %d", id, issued)
			}
			issued = id
		}
	}, func(img vfs.CrashImage) { crashes = append(crashes, pidCrash{img, issued}) })
	// Four blocks persisted, each in two directories.
	if points := crashes[len(crashes)-1].img.Point; points < 4*2 {
		t.Fatalf("only %d crash points; do the blocks go around the FS?", points)
	}
	checkPIDCrashes(t, crashes)
}

// TestProducerIDsFailedPersist fails the Nth filesystem operation of
// persisting a block (a torn write, when it is a write) for every N: the
// allocation fails without handing out an id, and neither a retry nor a
// restart, with or without a crash, reuses an id.
func TestProducerIDsFailedPersist(t *testing.T) {
	base := newPIDFS(t)
	ids := ProducerIDs{fs: base}
	issued := int64(-1)
	for range producerIDBlock { // use up the first block
		id, err := ids.allocate(pidDirs)
		if err != nil {
			t.Fatal(err)
		}
		issued = id
	}
	for n := 0; ; n++ {
		// Each round runs on a copy of base's disk, with a copy of the
		// allocator that has used up its block.
		mem := base.CrashClone(nil)
		live := ProducerIDs{fs: mem, loaded: true, next: ids.next, limit: ids.limit}
		fault, ops := vfs.FailNth(n)
		mem.SetFault(fault)
		var crashes []pidCrash
		var id int64
		var err error
		mem.CrashPoints([]uint64{1, 2}, func() { id, err = live.allocate(pidDirs) },
			func(img vfs.CrashImage) { crashes = append(crashes, pidCrash{img, issued}) })
		mem.SetFault(nil)
		if n >= ops() { // no operation was failed: every step has been tried
			if err != nil || id != issued+1 || n < 2*5 {
				t.Fatalf("allocate without a fault, after %d operations: %d, %v", ops(), id, err)
			}
			return
		}
		if err == nil {
			// The fault struck after the block was persisted everywhere
			// it must be (the last directory sync): fine, if it says so.
			if id != issued+1 {
				t.Fatalf("fault at operation %d: id %d after %d", n, id, issued)
			}
			crashes = append(crashes, pidCrash{vfs.CrashImage{Where: "after", Seed: -1, FS: mem.CrashClone(nil)}, id})
		} else if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("fault at operation %d: %v, want the injected error", n, err)
		}
		checkPIDCrashes(t, crashes)
		// The same allocator retries the persist and carries on.
		if next, err := live.allocate(pidDirs); err != nil || next <= issued {
			t.Fatalf("retry after a fault at operation %d: %d, %v (handed out up to %d)", n, next, err, issued)
		}
	}
}
