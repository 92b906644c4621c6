package vfs

import (
	"errors"
	"io/fs"
	"testing"
)

func TestCrashPoints(t *testing.T) {
	m := NewMemFS()
	var images []CrashImage
	m.CrashPoints([]uint64{1, 2}, func() {
		if err := WriteFileAtomic(m, "/f", []byte("new")); err != nil {
			t.Error(err)
		}
	}, func(img CrashImage) { images = append(images, img) })
	// create, write, sync, rename, syncdir, and after: 6 points of 3 images.
	if len(images) != 18 || images[0].Where != "before create /f.tmp" || images[17].Where != "after" || images[17].Point != 5 {
		t.Fatalf("%d images, first %q, last %q (point %d)", len(images), images[0].Where, images[len(images)-1].Where, images[len(images)-1].Point)
	}
	for _, img := range images {
		got, err := ReadFile(img.FS, "/f")
		switch {
		case img.Where == "after" && string(got) != "new":
			t.Fatalf("after the atomic write (seed %d): %q, %v", img.Seed, got, err)
		case img.Where != "after" && !errors.Is(err, fs.ErrNotExist):
			t.Fatalf("%s (seed %d): /f exists before its directory was synced: %q", img.Where, img.Seed, got)
		}
	}
	// A hook installed before is kept during fn and restored after it.
	m.SetFault(func(op Op, _ string, _ int) (int, error) {
		if op == OpSync {
			return 0, ErrInjected
		}
		return 0, nil
	})
	n := 0
	m.CrashPoints(nil, func() {
		if err := WriteFileAtomic(m, "/g", []byte("x")); !errors.Is(err, ErrInjected) {
			t.Errorf("the earlier hook did not fail the sync: %v", err)
		}
	}, func(CrashImage) { n++ })
	if n != 5 { // create, write, sync (fails), remove of the temporary file, after
		t.Fatalf("%d images around a failed write, want 5", n)
	}
	f, err := m.Create("/h")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("the earlier hook is not back after CrashPoints: %v", err)
	}
}

func TestFailNth(t *testing.T) {
	m := NewMemFS()
	fault, ops := FailNth(1) // the write, after the create
	m.SetFault(fault)
	f, err := m.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); err == nil || errors.Is(err, ErrInjected) {
		t.Fatalf("read: %v; reads are neither counted nor failed", err)
	}
	if n, err := f.WriteAt([]byte("abcd"), 0); n != 2 || !errors.Is(err, ErrInjected) {
		t.Fatalf("the failed write: %d, %v; want half of it torn in", n, err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("the operation after the failed one: %v", err)
	}
	if ops() != 3 {
		t.Fatalf("%d operations counted, want 3", ops())
	}
}
