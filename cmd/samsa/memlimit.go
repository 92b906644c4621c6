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
// while 26 MiB already does. That holds only with protoactor's registry
// kept small (actors/registry_shards.go): its default 32,768 maps left
// the collector running back to back at this limit under a replicated
// load. The figures, side by side, are in
// docs/performance.md. The Go limit excludes the binary's own mapped
// pages (~16 MiB resident).
//
// A fixed small limit would be a trap for a large broker, whose live heap
// (thousands of partitions, many connections) can exceed it: the
// collector would then run nearly without pause. So the limit follows
// the live heap: once a second the live heap is read, and when it passes
// three quarters of the limit the limit becomes twice the live heap; when
// the live heap falls under a quarter of the limit (a burst of large
// requests has gone) the limit comes back down to twice the live heap, no
// lower than the default, so that the next burst starts from a small
// heap instead of one the last burst inflated.
//
// The limit never passes the memory the process may have (memcap.go): a
// cgroup's limit or the address space left under RLIMIT_AS. Past that
// ceiling the collector works harder rather than the kernel killing the
// broker. Setting GOMEMLIMIT (any value, or "off") leaves the runtime's
// own handling in place.
const (
	defaultMemoryLimit = 28 << 20
	memoryLimitEvery   = time.Second
)

// startMemoryLimit applies the default limit unless GOMEMLIMIT is set, and
// moves it with the live heap until ctx is done.
func startMemoryLimit(ctx context.Context, logger *slog.Logger) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	limit := int64(defaultMemoryLimit)
	debug.SetMemoryLimit(limit)
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}}
		t := time.NewTicker(memoryLimitEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 || sample[1].Value.Kind() != metrics.KindUint64 {
				return // this runtime does not report them: keep the limit
			}
			live, mapped := int64(sample[0].Value.Uint64()), int64(sample[1].Value.Uint64())
			next := nextLimit(limit, live, memoryCeiling(mapped))
			if next == limit {
				continue
			}
			if next > limit {
				logger.Info("raising the soft memory limit: the live heap outgrew it", "live_bytes", live, "limit_bytes", next)
			} else {
				logger.Debug("lowering the soft memory limit", "live_bytes", live, "limit_bytes", next)
			}
			limit = next
			debug.SetMemoryLimit(limit)
		}
	}()
}

// nextLimit is the limit to use when live bytes are live under limit and
// the process may have at most ceiling bytes of Go memory (<= 0: no
// ceiling known).
func nextLimit(limit, live, ceiling int64) int64 {
	next := limit
	switch {
	case live*4 > limit*3:
		next = max(2*live, limit)
	case live*4 < limit:
		next = max(2*live, defaultMemoryLimit)
	}
	if ceiling > 0 && next > ceiling {
		next = max(ceiling, defaultMemoryLimit)
	}
	return next
}
