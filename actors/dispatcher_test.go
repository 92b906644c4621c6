package actors

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A worker that finished a run parks and takes the next one; a run
// scheduled while every worker is busy gets a worker of its own, so a
// blocked run never holds up another.
func TestWorkerDispatcherNeverQueuesBehindABlockedRun(t *testing.T) {
	d := newWorkerDispatcher(10, 4)
	defer d.stop()
	release := make(chan struct{})
	blocked := make(chan struct{})
	d.Schedule(func() { close(blocked); <-release })
	<-blocked
	ran := make(chan struct{})
	d.Schedule(func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("a run waited behind a blocked one")
	}
	close(release)
}

// Many runs from many goroutines all run exactly once, and the number of
// parked workers never exceeds the limit.
func TestWorkerDispatcherRunsEverythingOnce(t *testing.T) {
	d := newWorkerDispatcher(10, 3)
	defer d.stop()
	const n = 5000
	var wg sync.WaitGroup
	counts := make([]int32, n)
	var mu sync.Mutex
	wg.Add(n)
	for g := range 10 {
		go func() {
			for i := g; i < n; i += 10 {
				d.Schedule(func() {
					mu.Lock()
					counts[i]++
					mu.Unlock()
					wg.Done()
				})
			}
		}()
	}
	wg.Wait()
	for i, c := range counts {
		if c != 1 {
			t.Fatalf("run %d ran %d times", i, c)
		}
	}
	if p := d.parked.Load(); p > 3 {
		t.Fatalf("%d workers parked, limit 3", p)
	}
}

// After stop, parked workers exit and later runs still run. In a
// synctest bubble, synctest.Wait returns once every worker has exited
// or is blocked, so the count is read after the exits it checks.
func TestWorkerDispatcherStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newWorkerDispatcher(10, 4)
		done := make(chan struct{})
		d.Schedule(func() { close(done) })
		<-done
		d.stop()
		synctest.Wait()
		if p := d.parked.Load(); p != 0 {
			t.Fatalf("%d workers still parked after stop", p)
		}
		again := make(chan struct{})
		d.Schedule(func() { close(again) })
		select {
		case <-again:
		case <-time.After(10 * time.Second):
			t.Fatal("a run scheduled after stop never ran")
		}
	})
}
