package main

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The broker's default soft memory limit (Go's runtime/debug.SetMemoryLimit:
// the garbage collector runs sooner as the process's Go memory nears it).
//
// Why: with GOGC's default the heap may grow to twice what is live, and
// under a produce load what is live is mostly request frames in flight
// and the frame pool (netloop), so the heap's headroom doubled them. A
// replicating broker's live heap under load is about as small, since its
// followers read fetch responses into reused memory (interbroker's
// ResponseBuffer) and a produce frame goes back to the pool once
// appended, not once the ISR has it; so 28 MiB costs no CPU there either,
// while 26 MiB already does. The figures, side by side, are in
// docs/performance.md. The Go limit excludes the binary's own mapped
// pages (~16 MiB resident).
//
// A fixed small limit would be a trap for a large broker, whose live heap
// (thousands of partitions, many connections) can exceed it: the
// collector would then run nearly without pause. So the limit only ever
// rises: once a second the live heap is read, and when it passes three
// quarters of the limit the limit becomes twice the live heap. Setting
// GOMEMLIMIT (any value, or "off") leaves the runtime's own handling in
// place.
const (
	defaultMemoryLimit = 28 << 20
	memoryLimitEvery   = time.Second
)

// startMemoryLimit applies the default limit unless GOMEMLIMIT is set, and
// raises it as the live heap grows until ctx is done.
func startMemoryLimit(ctx context.Context, logger *slog.Logger) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	limit := int64(defaultMemoryLimit)
	debug.SetMemoryLimit(limit)
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(memoryLimitEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return // this runtime does not report it: keep the limit
			}
			if next, raise := raisedLimit(limit, int64(sample[0].Value.Uint64())); raise {
				logger.Info("raising the soft memory limit: the live heap outgrew the default",
					"live_bytes", sample[0].Value.Uint64(), "limit_bytes", next)
				limit = next
				debug.SetMemoryLimit(limit)
			}
		}
	}()
}

// raisedLimit is the limit to use when live bytes are live under limit.
func raisedLimit(limit, live int64) (int64, bool) {
	if live*4 <= limit*3 {
		return limit, false
	}
	return max(2*live, limit), true
}
