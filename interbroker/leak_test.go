package interbroker

import (
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// ownFrame matches a stack frame in this package's non-test code.
var ownFrame = regexp.MustCompile(`/interbroker/[a-z_]+[a-z]\.go:\d+`)

// noLeaks fails t if, once t's other cleanups (closing clients, channels
// and peers) have run, a goroutine is still inside this package's code.
// Register it first so it runs last. Close waits for its goroutines, but
// one that has just signalled its WaitGroup may still be on its way out,
// so the check yields for a while before it reports.
func noLeaks(t *testing.T) {
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			leaked := ownGoroutines()
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines left in interbroker:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
				return
			}
			runtime.Gosched()
		}
	})
}

func ownGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, m := range ownFrame.FindAllString(g, -1) {
			if !strings.Contains(m, "_test.go") {
				out = append(out, g)
				break
			}
		}
	}
	return out
}
