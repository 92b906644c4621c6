package netloop

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Two bursts a second apart: the first hands its memory back at once, the
// second once freeEvery has passed since the first (it used to be skipped,
// and its memory stayed resident).
func TestBurstsCloseTogetherAreAllHandedBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var handBacks atomic.Int32
		saved := handBackMemory
		handBackMemory = func() { handBacks.Add(1) }
		defer func() { handBackMemory = saved }()

		q := &queuedBytes{limit: 1 << 30}
		burst := func() {
			if !q.reserve(freeAfterBurst) {
				t.Fatal("reserve refused on an empty budget")
			}
			q.release(freeAfterBurst)
		}
		burst()
		synctest.Wait()
		if got := handBacks.Load(); got != 1 {
			t.Fatalf("after the first burst: %d hand-backs, want 1", got)
		}
		<-time.After(time.Second)
		burst()
		burst() // a third within the same window is folded into the second's
		synctest.Wait()
		if got := handBacks.Load(); got != 1 {
			t.Fatalf("a second after: %d hand-backs, want still 1 (rate-limited)", got)
		}
		<-time.After(freeEvery)
		synctest.Wait()
		if got := handBacks.Load(); got != 2 {
			t.Fatalf("once freeEvery passed: %d hand-backs, want 2", got)
		}
		// A small use of the budget hands nothing back.
		<-time.After(2 * freeEvery)
		q.reserve(1 << 10)
		q.release(1 << 10)
		synctest.Wait()
		if got := handBacks.Load(); got != 2 {
			t.Fatalf("after a small frame: %d hand-backs, want 2", got)
		}
	})
}
