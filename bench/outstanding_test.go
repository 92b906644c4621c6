package bench

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// TestOutstandingWaitsForEveryOperation races finishing operations against
// wait naming the total, and checks wait returns only once all have
// finished. The race detector sees every interleaving the scheduler makes;
// TestOutstandingOrders pins down the orders a race may rarely produce.
func TestOutstandingWaitsForEveryOperation(t *testing.T) {
	for round := range 200 {
		var o outstanding
		const total = 50
		var wg sync.WaitGroup
		var mu sync.Mutex
		finished := 0
		for range total {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mu.Lock()
				finished++
				mu.Unlock()
				o.done()
			}()
		}
		o.wait(total)
		mu.Lock()
		got := finished
		mu.Unlock()
		if got != total {
			t.Fatalf("round %d: wait returned after %d of %d operations finished", round, got, total)
		}
		wg.Wait()
	}
}

// TestOutstandingOrders finishes `before` operations before wait names the
// total and the rest one by one after, checking after each that wait is
// still waiting until the last. synctest.Wait returns once wait is parked,
// so "after" really is after wait named the total.
func TestOutstandingOrders(t *testing.T) {
	const total = 5
	for before := range total + 1 {
		synctest.Test(t, func(t *testing.T) {
			var o outstanding
			for range before {
				o.done()
			}
			var returned atomic.Bool
			go func() {
				o.wait(total)
				returned.Store(true)
			}()
			for i := before; i < total; i++ {
				synctest.Wait()
				if returned.Load() {
					t.Fatalf("%d finished before wait: wait returned after %d of %d", before, i, total)
				}
				o.done()
			}
			synctest.Wait()
			if !returned.Load() {
				t.Fatalf("%d finished before wait: wait still waiting after all %d", before, total)
			}
		})
	}
}

func TestOutstandingNothingToWaitFor(t *testing.T) {
	var o outstanding
	o.wait(0) // must not block
	o.done()
	o.done()
	o.wait(2) // both finished before the total was named
}
