package bench

import (
	"sync"
	"testing"
	"time"
)

// TestOutstandingWaitsForEveryOperation races finishing operations against
// wait naming the total, in both orders, and checks wait returns only
// once all have finished.
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
				if round%2 == 0 {
					time.Sleep(time.Microsecond)
				}
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

func TestOutstandingNothingToWaitFor(t *testing.T) {
	var o outstanding
	o.wait(0) // must not block
	o.done()
	o.done()
	o.wait(2) // both finished before the total was named
}
