package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func isTopicExists(err error) bool { return errors.Is(err, kerr.TopicAlreadyExists) }

// RunConsume reads w.Records records of w.Topic from the start with
// w.Consumers clients (each assigned a share of the partitions directly, no
// group) and measures throughput.
func RunConsume(ctx context.Context, w Workload, progress Progress) (Result, error) {
	if err := w.Validate(); err != nil {
		return Result{}, err
	}
	probe := probeBroker(w.Brokers[0])
	var done, bytes, errs atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go reportProgress(pctx, progress, &done, w.Records, start)
	var idle atomic.Bool
	if w.IdleTimeout > 0 {
		go watchIdle(pctx, &done, w.IdleTimeout, func() { idle.Store(true); stop() })
	}

	var wg sync.WaitGroup
	for c := range w.Consumers {
		parts := map[int32]kgo.Offset{}
		for p := int32(c); p < w.Partitions; p += int32(w.Consumers) {
			parts[p] = kgo.NewOffset().AtStart()
		}
		if len(parts) == 0 {
			continue
		}
		cl, err := w.newClient(kgo.SeedBrokers(w.Brokers...),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{w.Topic: parts}),
			kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(16<<20))
		if err != nil {
			return Result{}, err
		}
		defer cl.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < w.Records && pctx.Err() == nil {
				fetches := cl.PollFetches(pctx)
				fetches.EachError(func(_ string, _ int32, err error) {
					if errors.Is(err, context.Canceled) {
						return
					}
					if errs.Add(1) == 1 {
						firstErr.Store(err.Error())
					}
				})
				var n, b int64
				fetches.EachRecord(func(r *kgo.Record) {
					n++
					b += int64(len(r.Key) + len(r.Value))
				})
				bytes.Add(b)
				if done.Add(n) >= w.Records {
					stop()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	res := Result{Kind: "consume", Records: done.Load(), Bytes: bytes.Load(), Errors: errs.Load()}
	if s, ok := firstErr.Load().(string); ok {
		res.FirstError = s
	}
	res.Broker = probe.finish()
	res.finish(elapsed)
	if res.Records < w.Records && ctx.Err() != nil {
		return res, ctx.Err()
	}
	if idle.Load() && res.Records < w.Records {
		return res, fmt.Errorf("bench: no record arrived for %v; read %d of the %d asked for from %s (produce them first, or ask for fewer with --records)",
			w.IdleTimeout, res.Records, w.Records, w.Topic)
	}
	return res, nil
}

// watchIdle calls expire once done has not moved for timeout, checking
// ten times per timeout, and returns when ctx ends.
func watchIdle(ctx context.Context, done *atomic.Int64, timeout time.Duration, expire func()) {
	tick := time.NewTicker(timeout / 10)
	defer tick.Stop()
	last, since := done.Load(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if n := done.Load(); n != last {
				last, since = n, now
			} else if now.Sub(since) >= timeout {
				expire()
				return
			}
		}
	}
}
