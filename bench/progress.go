package bench

import (
	"context"
	"sync/atomic"
	"time"
)

// Progress is told, about twice a second, how many records a run has done
// out of its total. Nil means no progress reports.
type Progress func(done, total int64, elapsed time.Duration)

// reportProgress calls p every interval until ctx ends.
func reportProgress(ctx context.Context, p Progress, done *atomic.Int64, total int64, start time.Time) {
	if p == nil {
		return
	}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p(done.Load(), total, time.Since(start))
		}
	}
}
