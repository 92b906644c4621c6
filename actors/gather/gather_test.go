package gather

import (
	"sync"
	"testing"
	"time"
)

func TestGatherCallsDoneOnceWithEveryAnswer(t *testing.T) {
	const n = 64
	got := make(chan []int64, 2)
	g := New(n, time.Minute, func(r []int64, timedOut bool) {
		if timedOut {
			t.Error("timed out")
		}
		got <- r
	})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); g.Put(i, int64(i*10)) }()
	}
	wg.Wait()
	r := <-got
	for i, v := range r {
		if v != int64(i*10) {
			t.Fatalf("slot %d = %d", i, v)
		}
	}
	select {
	case <-got:
		t.Fatal("done called twice")
	default:
	}
}

func TestGatherOfNothingIsDoneAtOnce(t *testing.T) {
	called := false
	New(0, time.Minute, func(r []int64, timedOut bool) { called = !timedOut && len(r) == 0 })
	if !called {
		t.Fatal("empty gather did not complete")
	}
}

func TestGatherDeadlineAnswersWithoutTheMissing(t *testing.T) {
	got := make(chan bool, 1)
	g := New(2, 10*time.Millisecond, func(r []int64, timedOut bool) { got <- timedOut && r == nil })
	g.Put(0, 1) // the second answer never comes
	if ok := <-got; !ok {
		t.Fatal("deadline did not report a timeout with no results")
	}
	g.Put(1, 2) // a late answer must not call done again
	select {
	case <-got:
		t.Fatal("late answer called done")
	case <-time.After(20 * time.Millisecond):
	}
}
