package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/segment/vfs"
)

var (
	crashDirs  = []string{"/data/d1", "/data/d2"}
	crashSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}
)

// snapshotJSON is the form snapshots are compared in; "none" stands for
// a fresh directory (no snapshot).
func snapshotJSON(t *testing.T, s *Snapshot) string {
	t.Helper()
	if s == nil {
		return "none"
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// reopen is what a restart after the crash does: OpenFS, then New. It
// must succeed and load old or new; it returns which.
func reopen(t *testing.T, img vfs.CrashImage, old, new string) string {
	t.Helper()
	b := broker(t, "log.dirs", strings.Join(crashDirs, ","))
	store, snap, err := OpenFS(img.FS, crashDirs)
	if err != nil {
		t.Fatalf("crash %s (point %d, seed %d): open: %v", img.Where, img.Point, img.Seed, err)
	}
	got := snapshotJSON(t, snap)
	switch got {
	case old:
		got = "old"
	case new:
		got = "new"
	default:
		t.Fatalf("crash %s (point %d, seed %d): loaded neither the old nor the new snapshot:\n%s\nold %s\nnew %s",
			img.Where, img.Point, img.Seed, got, old, new)
	}
	if _, err := New(b, snap, store, newRand()); err != nil {
		t.Fatalf("crash %s (seed %d): the loaded snapshot does not start: %v", img.Where, img.Seed, err)
	}
	return got
}

// checkCrashes checks the images of one save (old → new): every crash
// loads old or new, all images of a point agree (the fate of unsynced
// bytes must not matter), the answer never goes back from new to old,
// and once the save returned nil it is new.
func checkCrashes(t *testing.T, images []vfs.CrashImage, old, new string, saved bool) {
	t.Helper()
	seenNew := false
	point, answer := -1, ""
	for _, img := range images {
		got := reopen(t, img, old, new)
		if img.Point == point && got != answer {
			t.Fatalf("crash %s: seed %d loads the %s snapshot, another image of the point the %s one", img.Where, img.Seed, got, answer)
		}
		point, answer = img.Point, got
		if got == "old" && seenNew {
			t.Fatalf("crash %s (seed %d): back to the old snapshot after an earlier crash point had the new one", img.Where, img.Seed)
		}
		seenNew = seenNew || got == "new"
		if img.Where == "after" && saved && got != "new" {
			t.Fatalf("crash after Save returned nil (seed %d): the %s snapshot", img.Seed, got)
		}
	}
}

// TestFileStoreCrashAtEveryStep drives a State through a broker's life on
// a MemFS (first start, topics created, configs altered, a topic deleted
// and its deletion finished) and crashes at every filesystem operation of
// every save, in every fate of the unsynced bytes.
func TestFileStoreCrashAtEveryStep(t *testing.T) {
	mem := vfs.NewMemFS()
	b := broker(t, "log.dirs", strings.Join(crashDirs, ","))
	var s *State
	current := func() string {
		if s == nil {
			return "none"
		}
		return snapshotJSON(t, s.snap)
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"open and first save", func() error {
			store, snap, err := OpenFS(mem, crashDirs)
			if err != nil {
				return err
			}
			s, err = New(b, snap, store, newRand())
			return err
		}},
		{"create topics", func() error {
			resp, _ := s.CreateTopics(createReq(topicReq("a", 3, 1, "retention.ms", "77"), topicReq("b", 1, 1)), now)
			return topicErrors(resp.Topics[0].ErrorCode, resp.Topics[1].ErrorCode)
		}},
		{"alter a broker config", func() error {
			resp, _ := s.IncrementalAlterConfigs(incremental(kmsg.ConfigResourceTypeBroker, "", "log.segment.bytes", kmsg.IncrementalAlterConfigOpSet, "2000000"))
			return topicErrors(resp.Resources[0].ErrorCode)
		}},
		{"delete a topic", func() error {
			del := kmsg.NewPtrDeleteTopicsRequest()
			del.SetVersion(6)
			del.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("a")}}
			resp, _ := s.DeleteTopics(del)
			return topicErrors(resp.Topics[0].ErrorCode)
		}},
		{"finish the deletion", func() error {
			a := s.snap.Deleting[0]
			return s.FinishDeletion(a.Name, a.ID)
		}},
	}
	for _, step := range steps {
		old := current()
		var images []vfs.CrashImage
		var err error
		mem.CrashPoints(crashSeeds, func() { err = step.run() }, func(img vfs.CrashImage) { images = append(images, img) })
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		new := current()
		if new == old {
			t.Fatalf("%s changed nothing", step.name)
		}
		if len(images) < 5*(len(crashSeeds)+1) {
			t.Fatalf("%s: only %d crash images; did the save go around the FS?", step.name, len(images))
		}
		checkCrashes(t, images, old, new, true)
	}
}

func topicErrors(codes ...int16) error {
	for _, c := range codes {
		if c != 0 {
			return fmt.Errorf("error code %d", c)
		}
	}
	return nil
}

// TestFileStoreFailedSave fails the Nth filesystem operation of a Save
// (a torn write, when it is a write) for every N: the save may fail, but
// the directory then still opens to the old or the new snapshot, on the
// live filesystem and after a crash, and the next save works.
func TestFileStoreFailedSave(t *testing.T) {
	snap := func(tag string, size int) *Snapshot {
		return &Snapshot{Version: SnapshotVersion, ClusterID: "c", DynamicBroker: map[string]string{"tag": tag, "pad": strings.Repeat("x", size)}}
	}
	base := vfs.NewMemFS()
	store, _, err := OpenFS(base, crashDirs)
	if err != nil {
		t.Fatal(err)
	}
	oldSnap := snap("old", 300)
	if err := store.Save(oldSnap); err != nil {
		t.Fatal(err)
	}
	old, newSnap := snapshotJSON(t, oldSnap), snap("new", 100) // shorter: a mix would show
	new := snapshotJSON(t, newSnap)
	for n := 0; ; n++ {
		mem := base.CrashClone(nil) // all of base is synced: an exact copy
		fault, ops := vfs.FailNth(n)
		mem.SetFault(fault)
		st := &FileStore{Path: store.Path, FS: mem}
		var images []vfs.CrashImage
		var saveErr error
		mem.CrashPoints(crashSeeds, func() { saveErr = st.Save(newSnap) }, func(img vfs.CrashImage) { images = append(images, img) })
		mem.SetFault(nil)
		if n >= ops() { // no operation was failed: every step has been tried
			if saveErr != nil || n < 5 {
				t.Fatalf("save without a fault after %d operations: %v", ops(), saveErr)
			}
			return
		}
		if saveErr != nil && !errors.Is(saveErr, vfs.ErrInjected) {
			t.Fatalf("fault at operation %d: %v, want the injected error", n, saveErr)
		}
		checkCrashes(t, images, old, new, saveErr == nil)
		if got := reopen(t, vfs.CrashImage{Where: fmt.Sprintf("none, fault at operation %d", n), FS: mem}, old, new); saveErr == nil && got != "new" {
			t.Fatalf("fault at operation %d: Save returned nil but the directory holds the old snapshot", n)
		}
		// A failed save leaves nothing in the way of the next.
		third := snap("third", 200)
		if err := st.Save(third); err != nil {
			t.Fatalf("save after a fault at operation %d: %v", n, err)
		}
		if _, got, err := OpenFS(mem.CrashClone(nil), crashDirs); err != nil || snapshotJSON(t, got) != snapshotJSON(t, third) {
			t.Fatalf("after a fault at operation %d and a good save, a crash loads %v, %v", n, got, err)
		}
	}
}
