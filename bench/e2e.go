package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// RunE2E produces w.Records records at w.Rate records/s with one producer
// while one consumer reads them, and measures end-to-end latency from each
// record's intended send time (carried in its value) to its receipt.
func RunE2E(ctx context.Context, w Workload, progress Progress) (Result, error) {
	if err := w.Validate(); err != nil {
		return Result{}, err
	}
	if w.Rate <= 0 {
		return Result{}, errors.New("bench: e2e needs a fixed --rate")
	}
	if w.RecordSize < 8 {
		return Result{}, fmt.Errorf("bench: e2e records need at least 8 bytes for the send time, got %d", w.RecordSize)
	}
	if err := EnsureTopic(ctx, w); err != nil {
		return Result{}, err
	}
	// The consumer starts at the end of the log before anything is sent.
	cons, err := kgo.NewClient(kgo.SeedBrokers(w.Brokers...), kgo.ConsumeTopics(w.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return Result{}, err
	}
	defer cons.Close()
	e2e := NewLatency()
	var received, bytes atomic.Int64
	cctx, stopConsumer := context.WithCancel(ctx)
	defer stopConsumer()
	consumerDone := make(chan struct{})
	go func() {
		defer close(consumerDone)
		for received.Load() < w.Records && cctx.Err() == nil {
			fetches := cons.PollFetches(cctx)
			now := time.Now()
			fetches.EachRecord(func(r *kgo.Record) {
				sent := int64(binary.BigEndian.Uint64(r.Value))
				e2e.Record(now.Sub(time.Unix(0, sent)))
				bytes.Add(int64(len(r.Key) + len(r.Value)))
				received.Add(1)
			})
		}
	}()
	// Make sure the consumer has its position before producing: a first
	// poll returns once partitions are assigned and listed.
	if err := cons.Ping(ctx); err != nil {
		return Result{}, err
	}
	time.Sleep(200 * time.Millisecond) // let the first ListOffsets settle; not a measurement

	pw := w
	pw.Producers = 1
	prodRes, err := RunProduce(ctx, pw, progress)
	if err != nil {
		return Result{}, err
	}
	// Wait for the stragglers, bounded.
	deadline := time.After(10 * time.Second)
wait:
	for received.Load() < prodRes.Records {
		select {
		case <-deadline:
			break wait
		case <-consumerDone:
			break wait
		case <-time.After(10 * time.Millisecond):
		}
	}
	stopConsumer()
	<-consumerDone

	res := prodRes
	res.Kind = "e2e"
	sum := e2e.Summary()
	res.EndToEnd = &sum
	if got := received.Load(); got < prodRes.Records {
		res.Errors += prodRes.Records - got
		if res.FirstError == "" {
			res.FirstError = fmt.Sprintf("consumer received %d of %d records", got, prodRes.Records)
		}
	}
	return res, nil
}
