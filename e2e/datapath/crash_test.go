package datapath

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Crash records carry their producer and sequence number:
//
//	key       "p<producer>-<seq>"
//	value     crashValue(producer, seq), 16..79 bytes
//	headers   "p" = producer, "seq" = seq (8 bytes big-endian each)
//	timestamp base + seq ms
//	partition seq % partitions
//
// so any record read back can be checked on its own, acknowledged or not.

func crashKey(p, seq int) []byte { return fmt.Appendf(nil, "p%d-%d", p, seq) }

func crashValue(p, seq int) []byte {
	v := make([]byte, 16+(seq*13+p*7)%64)
	x := uint64(p)<<40 ^ uint64(seq)*0x9E3779B97F4A7C15 ^ 0xD1B54A32D192ED03
	for j := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[j] = byte(x)
	}
	return v
}

type crashAck struct {
	partition int32
	offset    int64
}

// crashLedger remembers what each producer had acknowledged.
type crashLedger struct {
	mu    sync.Mutex
	acks  []map[int]crashAck // per producer: seq -> where it was acknowledged
	sent  []int              // per producer: how many records were handed to the client
	errs  int
	first error
}

// TestCrashSafety kills the broker with SIGKILL while idempotent acks=all
// producers write, at seeded random points, restarts it, and lets the
// producers carry on. At the end every acknowledged record must be at the
// offset it was acknowledged with, byte for byte; no record may appear
// twice; offsets are dense and each producer's records keep their order
// in each partition. Segments are 256 KiB, so kills also land near
// rolls. Set SAMSA_CRASH_SEED to replay a run.
func TestCrashSafety(t *testing.T) {
	// Small segments: recovery meets many segment files and rolls, not
	// just the tail of one.
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: []string{"--log.segment.bytes", "262144"}})
	requireDataPath(t, b.Addr())

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SAMSA_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("SAMSA_CRASH_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (replay with SAMSA_CRASH_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5A45A))

	const partitions = 3
	const producers = 3
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	topic := topicName(t, "crash")
	createTopic(t, b.Addr(), topic, partitions, nil)
	base := timeBase()

	ledger := &crashLedger{acks: make([]map[int]crashAck, producers), sent: make([]int, producers)}
	for p := range ledger.acks {
		ledger.acks[p] = make(map[int]crashAck)
	}

	// The round loop waits for acknowledgement counts.
	var watch ackWatch

	stop := make(chan struct{})
	var wg sync.WaitGroup
	clients := make([]*kgo.Client, producers)
	for p := range producers {
		clients[p] = newClient(t, b.Addr(),
			kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerLinger(2*time.Millisecond),
			kgo.MaxBufferedRecords(2000), // block while the broker is down rather than pile up
			kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
			kgo.ProducerBatchCompression([]kgo.CompressionCodec{kgo.NoCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}[p]),
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := clients[p]
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				r := &kgo.Record{Topic: topic, Partition: int32(seq % partitions),
					Key: crashKey(p, seq), Value: crashValue(p, seq),
					Headers: []kgo.RecordHeader{
						{Key: "p", Value: binary.BigEndian.AppendUint64(nil, uint64(p))},
						{Key: "seq", Value: binary.BigEndian.AppendUint64(nil, uint64(seq))},
					},
					Timestamp: recordTime(base, seq)}
				ledger.mu.Lock()
				ledger.sent[p] = seq + 1
				ledger.mu.Unlock()
				cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
					ledger.mu.Lock()
					if err != nil {
						ledger.errs++
						if ledger.first == nil {
							ledger.first = fmt.Errorf("producer %d record %s: %w", p, r.Key, err)
						}
					} else {
						ledger.acks[p][seq] = crashAck{r.Partition, r.Offset}
					}
					ledger.mu.Unlock()
					if err == nil {
						watch.ack()
					}
				})
			}
		}()
	}

	live := startLiveConsumer(t, b.Addr(), topic, partitions)

	roundDeadline := 90 * time.Second
	for round := 1; round <= rounds; round++ {
		after := int64(500 + rng.IntN(20_000))
		downtime := time.Duration(rng.IntN(300)) * time.Millisecond
		select {
		case <-watch.when(watch.count() + after):
		case <-time.After(roundDeadline):
			close(stop)
			t.Fatalf("round %d: the producers made %d acknowledgements, not %d more, within %v (first error: %v)",
				round, watch.count(), after, roundDeadline, ledger.firstErr())
		}
		b.Kill()
		t.Logf("round %d: killed after %d acknowledgements (+%d), down for %v", round, watch.count(), after, downtime)
		time.Sleep(downtime) // the producers meet a dead broker for a while
		if err := b.Start(); err != nil {
			close(stop)
			t.Fatalf("round %d: restart: %v", round, err)
		}
	}
	// Carry on after the last restart, then stop and drain.
	select {
	case <-watch.when(watch.count() + 5000):
	case <-time.After(roundDeadline):
		t.Errorf("after the last restart the producers did not carry on: %d acknowledgements (first error: %v)",
			watch.count(), ledger.firstErr())
	}
	close(stop)
	wg.Wait()
	for p, cl := range clients {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := cl.Flush(ctx); err != nil {
			t.Errorf("producer %d: flush: %v", p, err)
		}
		cancel()
	}
	if ledger.errs > 0 {
		t.Errorf("%d records failed to produce; the idempotent producer retries forever, so the broker refused them; first: %v",
			ledger.errs, ledger.first)
	}
	final := verifyCrashLog(t, b.Addr(), topic, partitions, base, ledger)
	live.compare(t, final)
}

// liveConsumer reads the topic while the broker is killed and restarted:
// its fetch sessions (KIP-227) die with each broker process, so it checks
// that a restarted broker lets a consumer carry on from where it was.
type liveConsumer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	keys     [][]string // per partition, by offset
	problems []string
}

func startLiveConsumer(t *testing.T, addr, topic string, partitions int32) *liveConsumer {
	offsets := map[int32]kgo.Offset{}
	for p := range partitions {
		offsets[p] = kgo.NewOffset().At(0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &liveConsumer{cancel: cancel, done: make(chan struct{}), keys: make([][]string, partitions),
		cl: newClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
			kgo.FetchMaxWait(200*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			fs := c.cl.PollFetches(ctx)
			c.mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				if want := int64(len(c.keys[r.Partition])); r.Offset != want && len(c.problems) < 10 {
					c.problems = append(c.problems, fmt.Sprintf("live consumer: partition %d offset %d after offset %d", r.Partition, r.Offset, want-1))
				}
				if r.Offset == int64(len(c.keys[r.Partition])) {
					c.keys[r.Partition] = append(c.keys[r.Partition], string(r.Key))
				}
			})
			c.mu.Unlock()
		}
	}()
	return c
}

// compare waits until the live consumer has read as far as the final log
// and fails t unless it read the same record at every offset: a record a
// consumer saw before a crash must not vanish or change.
func (c *liveConsumer) compare(t *testing.T, final [][]string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c.mu.Lock()
		caughtUp := true
		for p := range final {
			caughtUp = caughtUp && len(c.keys[p]) >= len(final[p])
		}
		c.mu.Unlock()
		if caughtUp || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling the consumer's progress, bounded by deadline
	}
	c.cancel()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.problems {
		t.Error(p)
	}
	read := 0
	for _, ks := range c.keys {
		read += len(ks)
	}
	t.Logf("live consumer read %d records across the kills", read)
	for p := range final {
		if len(c.keys[p]) < len(final[p]) {
			t.Errorf("live consumer: partition %d read %d of %d records in 60 s after the last restart: it does not carry on after broker restarts",
				p, len(c.keys[p]), len(final[p]))
		}
		diffs := 0
		for o := range min(len(c.keys[p]), len(final[p])) {
			if c.keys[p][o] != final[p][o] {
				if diffs++; diffs <= 5 {
					t.Errorf("partition %d offset %d: the live consumer read %s, the log now holds %s",
						p, o, c.keys[p][o], final[p][o])
				}
			}
		}
	}
}

func (l *crashLedger) firstErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first
}

// verifyCrashLog reads every partition to its end and checks it against
// the ledger. It returns each partition's record keys by offset.
func verifyCrashLog(t *testing.T, addr, topic string, partitions int32, base time.Time, ledger *crashLedger) [][]string {
	ctx := deadline(t, 2*time.Minute)
	cl := newClient(t, addr)
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	offsets := map[int32]kgo.Offset{}
	end := make([]int64, partitions)
	remaining := 0
	for p := range partitions {
		o, ok := ends.Lookup(topic, p)
		if !ok || o.Err != nil {
			t.Fatalf("end offset of partition %d: %v", p, o.Err)
		}
		end[p] = o.Offset
		remaining += int(o.Offset)
		offsets[p] = kgo.NewOffset().At(0)
	}
	consumer := newClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(200*time.Millisecond))

	type key struct{ p, seq int }
	where := map[key]crashAck{}
	keys := make([][]string, partitions)
	next := make([]int64, partitions)
	lastSeq := map[[2]int]int{} // (producer, partition) -> last seq
	problems := 0
	problem := func(format string, args ...any) {
		problems++
		if problems <= 20 {
			t.Errorf(format, args...)
		}
	}
	for remaining > 0 {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed all but %d records before the deadline", remaining)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch partition %d: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= end[r.Partition] {
				return // written after ListEndOffsets: nothing should be, but it is not ours to judge here
			}
			remaining--
			if r.Offset == int64(len(keys[r.Partition])) {
				keys[r.Partition] = append(keys[r.Partition], string(r.Key))
			}
			at := fmt.Sprintf("partition %d offset %d", r.Partition, r.Offset)
			if r.Offset != next[r.Partition] {
				problem("%s: offsets not dense, want %d", at, next[r.Partition])
			}
			next[r.Partition] = r.Offset + 1
			if len(r.Headers) != 2 || r.Headers[0].Key != "p" || r.Headers[1].Key != "seq" ||
				len(r.Headers[0].Value) != 8 || len(r.Headers[1].Value) != 8 {
				problem("%s: headers %v", at, r.Headers)
				return
			}
			p := int(binary.BigEndian.Uint64(r.Headers[0].Value))
			seq := int(binary.BigEndian.Uint64(r.Headers[1].Value))
			if p < 0 || p >= len(ledger.acks) {
				problem("%s: producer %d out of range", at, p)
				return
			}
			if !bytes.Equal(r.Key, crashKey(p, seq)) || !bytes.Equal(r.Value, crashValue(p, seq)) ||
				!r.Timestamp.Equal(recordTime(base, seq)) || r.Partition != int32(seq%int(partitions)) {
				problem("%s: record p%d-%d is not what was sent (key %q, %d value bytes, timestamp %d)",
					at, p, seq, r.Key, len(r.Value), r.Timestamp.UnixMilli())
			}
			k := key{p, seq}
			if first, dup := where[k]; dup {
				problem("%s: record p%d-%d appears twice (first at partition %d offset %d)",
					at, p, seq, first.partition, first.offset)
				return
			}
			where[k] = crashAck{r.Partition, r.Offset}
			pp := [2]int{p, int(r.Partition)}
			if last, ok := lastSeq[pp]; ok && seq <= last {
				problem("%s: record p%d-%d after p%d-%d: order lost", at, p, seq, p, last)
			}
			lastSeq[pp] = seq
		})
	}
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	acked, lost, moved := 0, 0, 0
	for p, acks := range ledger.acks {
		for seq, a := range acks {
			acked++
			got, ok := where[key{p, seq}]
			switch {
			case !ok:
				lost++
				if lost <= 10 {
					t.Errorf("acknowledged record p%d-%d (partition %d offset %d) is gone", p, seq, a.partition, a.offset)
				}
			case got != a:
				moved++
				if moved <= 10 {
					t.Errorf("acknowledged record p%d-%d was acknowledged at partition %d offset %d but is at offset %d",
						p, seq, a.partition, a.offset, got.offset)
				}
			}
		}
	}
	unacked := len(where) - (acked - lost)
	t.Logf("%d records in the log, %d acknowledged (%d lost, %d moved), %d present without acknowledgement; %d problems",
		len(where), acked, lost, moved, unacked, problems)
	for p, n := range ledger.sent {
		if got := len(ledger.acks[p]); got != n {
			t.Errorf("producer %d: %d records handed to the client, %d acknowledged", p, n, got)
		}
	}
	return keys
}
