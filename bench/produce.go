package bench

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// EnsureTopic creates w.Topic with w.Partitions partitions unless it
// exists.
func EnsureTopic(ctx context.Context, w Workload) error {
	cl, err := w.newClient(kgo.SeedBrokers(w.Brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, w.Partitions, 1, nil, w.Topic)
	if err != nil && resp.Err == nil {
		return err
	}
	if resp.Err != nil && !isTopicExists(resp.Err) {
		return resp.Err
	}
	return nil
}

// payload builds the value of record i: the intended send time in the
// first 8 bytes (when the value has room), the rest a fixed filler.
func payload(buf []byte, intended time.Time) []byte {
	if len(buf) >= 8 {
		binary.BigEndian.PutUint64(buf, uint64(intended.UnixNano()))
	}
	return buf
}

func key(w *Workload, i int64, rng *rand.Rand) []byte {
	if w.KeySize == 0 || w.KeyDist == "none" {
		return nil
	}
	k := make([]byte, w.KeySize)
	n := uint64(i)
	if w.KeyDist == "uniform" {
		n = rng.Uint64()
	}
	for j := range k {
		k[j] = byte('a' + (n>>(uint(j)%8*8))%26)
	}
	return k
}

// unpacedLatencySample: without a fixed rate, the produce latency of one
// record in this many is measured. The records timed are chosen by their
// place in the send order, which has nothing to do with their latency, so
// the percentiles stand (a 3 M record run still times 375,000); reading
// the clock twice and taking the histogram's lock for every record were a
// fifth of the generator's CPU. The others take the last time read as
// their record timestamp (Kafka's CreateTime, in milliseconds). Fixed-rate
// runs time every record.
const unpacedLatencySample = 8

// RunProduce sends w.Records records with w.Producers clients and measures
// throughput and produce latency.
func RunProduce(ctx context.Context, w Workload, progress Progress) (Result, error) {
	if err := w.Validate(); err != nil {
		return Result{}, err
	}
	if err := EnsureTopic(ctx, w); err != nil {
		return Result{}, err
	}
	opts, err := w.producerOpts()
	if err != nil {
		return Result{}, err
	}
	var reqs requestCounter
	opts = append(opts, kgo.WithHooks(&reqs))
	probe := probeBroker(w.Brokers[0])
	lat, lateness := NewLatency(), NewLatency()
	var done, errs, bytes atomic.Int64
	var firstErr atomic.Value

	clock := newWallClock()
	start := clock.anchor
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go reportProgress(pctx, progress, &done, w.Records, start)

	var wg sync.WaitGroup
	perProducer := w.Records / int64(w.Producers)
	for p := range w.Producers {
		n := perProducer
		if p == 0 {
			n += w.Records % int64(w.Producers)
		}
		cl, err := w.newClient(opts...)
		if err != nil {
			return Result{}, err
		}
		defer cl.Close()
		wg.Add(1)
		go func(p int, n int64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(p), 42))
			// Each producer takes an equal share of the rate.
			var interval time.Duration
			if w.Rate > 0 {
				interval = time.Duration(float64(time.Second) * float64(w.Producers) / float64(w.Rate))
			}
			// Records and their values are recycled once their promise has
			// run (the client is done with them then), and one promise
			// serves every record: the generator's own allocations would
			// otherwise cost it more CPU than the broker spends, and on a
			// shared machine that caps what the broker can be shown to do.
			pool := newRecordPool(w.RecordSize)
			// The promises count what they finished; the loop below says
			// how many it sent once it is done. Counting in flight records
			// with a WaitGroup instead made the sending goroutine and the
			// client's promise goroutine write one cache line per record.
			var finished outstanding
			promise := func(r *kgo.Record, err error) {
				if sent, timed := pool.sentAt(r); timed {
					lat.Record(clock.now().Sub(sent))
				}
				if err != nil {
					if errs.Add(1) == 1 {
						firstErr.Store(err.Error())
					}
				} else {
					bytes.Add(int64(len(r.Key) + len(r.Value)))
					done.Add(1)
				}
				pool.put(r)
				finished.done()
			}
			var sent int64
			var intended time.Time
			for i := range n {
				timed := true
				if interval > 0 {
					// Latency counts from when the record was due, so a
					// generator held up by a slow broker shows it (no
					// coordinated omission). How late the generator itself
					// was is recorded too: it is part of every such latency
					// and no fault of the broker's.
					intended = start.Add(time.Duration(i) * interval)
					if d := time.Until(intended); d > 0 {
						time.Sleep(d)
					}
					lateness.Record(time.Since(intended))
				} else if timed = i%unpacedLatencySample == 0; timed {
					intended = clock.now()
				}
				r := pool.get(intended, timed)
				r.Key = key(&w, i, rng)
				sent++
				cl.Produce(ctx, r, promise)
				if ctx.Err() != nil {
					break
				}
			}
			finished.wait(sent)
		}(p, n)
	}
	wg.Wait()
	elapsed := time.Since(start)
	stop()

	res := Result{Kind: "produce", Records: done.Load(), Bytes: bytes.Load(), Errors: errs.Load(),
		ProduceRequests: reqs.produce.Load()}
	if s, ok := firstErr.Load().(string); ok {
		res.FirstError = s
	}
	sum := lat.Summary()
	res.Produce = &sum
	if w.Rate > 0 {
		l := lateness.Summary()
		res.SendLateness = &l
	}
	res.Broker = probe.finish()
	res.finish(elapsed)
	return res, ctx.Err()
}
