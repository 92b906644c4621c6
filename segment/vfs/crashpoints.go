package vfs

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// CrashImage is one disk state a power loss could leave, taken by
// CrashPoints.
type CrashImage struct {
	// Point numbers the crash point (0 is before fn's first operation);
	// the images of one point share it.
	Point int
	// Where says what the crash preceded: "before rename /d/f.tmp", or
	// "after" for the point after fn returned.
	Where string
	// Seed is the seed of the image's unsynced-data fate; -1 for the
	// image with only synced data (CrashClone(nil)).
	Seed int64
	FS   *MemFS
}

// CrashPoints runs fn and hands at every disk state a power loss could
// leave at any point of it: before each operation fn makes on m that can
// change the disk (all but open and read), and after fn returns. Each
// point gives one image with only synced data, and one per seed in which
// unsynced bytes meet a random fate (CrashClone). This is the pebble
// crash-clone test without the guessing: every point is tried, not a
// sampled one.
//
// at runs inside fn's filesystem calls, while fn may hold its own locks:
// it should record the image (and what the test knows at that moment),
// not call back into the code under test. A fault hook installed before
// stays in force, consulted after the image is taken, so a point is the
// state just before an injected failure too. CrashPoints replaces the
// hook only while fn runs.
func (m *MemFS) CrashPoints(seeds []uint64, fn func(), at func(CrashImage)) {
	prev := m.fault.Load()
	var mu sync.Mutex // fn may call m from several goroutines
	point := 0
	take := func(where string) {
		mu.Lock()
		defer mu.Unlock()
		at(CrashImage{Point: point, Where: where, Seed: -1, FS: m.CrashClone(nil)})
		for _, s := range seeds {
			rng := rand.New(rand.NewPCG(s, uint64(point)))
			at(CrashImage{Point: point, Where: where, Seed: int64(s), FS: m.CrashClone(rng)})
		}
		point++
	}
	m.SetFault(func(op Op, name string, size int) (int, error) {
		if changesDisk(op) {
			take(fmt.Sprintf("before %s %s", op, name))
		}
		if prev != nil {
			return (*prev)(op, name, size)
		}
		return 0, nil
	})
	defer m.fault.Store(prev) // also when fn panics
	fn()
	m.fault.Store(prev) // so at may use m on the last point without re-entering take
	take("after")
}

// changesDisk reports whether op can change what a crash leaves.
func changesDisk(op Op) bool { return op != OpOpen && op != OpRead }

// FailNth returns a fault hook that fails the nth (from 0) operation that
// can change the disk (all but open and read) with ErrInjected, tearing
// it when it is a write (half of it lands), and a count of the operations
// it has been asked about. A test runs one step with FailNth(n) for n = 0,
// 1, ... until the count shows the step made no nth operation: by then
// every operation of the step has failed once.
func FailNth(n int) (FaultFunc, func() int) {
	var seen atomic.Int64
	return func(op Op, _ string, size int) (int, error) {
		if !changesDisk(op) {
			return 0, nil
		}
		if seen.Add(1)-1 == int64(n) {
			return size / 2, ErrInjected
		}
		return 0, nil
	}, func() int { return int(seen.Load()) }
}
