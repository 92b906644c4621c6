package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
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
	// The consumer starts at each partition's end offset, listed before
	// anything is sent: a consumer left to find the end itself (AtEnd)
	// lists it whenever its first metadata arrives, which on a cluster can
	// be after the first records were acknowledged, and those would then
	// never arrive.
	start, err := endOffsets(ctx, w)
	if err != nil {
		return Result{}, err
	}
	cons, err := w.newClient(kgo.SeedBrokers(w.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{w.Topic: start}), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return Result{}, err
	}
	defer cons.Close()
	// Connected before the first record is due, so that the first
	// latencies are not the consumer's own start.
	if err := cons.Ping(ctx); err != nil {
		return Result{}, err
	}
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

// endOffsets lists the end offset of every partition of w.Topic.
func endOffsets(ctx context.Context, w Workload) (map[int32]kgo.Offset, error) {
	cl, err := w.newClient(kgo.SeedBrokers(w.Brokers...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, w.Topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("bench: listing the end offsets of %s: %w", w.Topic, err)
	}
	out := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = kgo.NewOffset().At(o.Offset) })
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: %s has no partitions", w.Topic)
	}
	return out, nil
}
