package actors_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// A franz-go producer (idempotent by default) writes through the real
// network path with every codec; kadm's ListOffsets and DeleteRecords
// see exactly what was acknowledged, also after a restart.
func TestProduceWithFranzGo(t *testing.T) {
	dir := t.TempDir()
	n := testkit.StartInProcess(t, "log.dirs", dir)
	adm, _ := n.Admin(t)
	ctx := ctxT(t)
	if _, err := adm.CreateTopics(ctx, 3, 1, nil, "kgo"); err != nil {
		t.Fatal(err)
	}

	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}
	perCodec := 600
	for _, codec := range codecs {
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.DefaultProduceTopic("kgo"),
			kgo.ProducerBatchCompression(codec), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
			kgo.ProducerLinger(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for i := range perCodec {
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: make([]byte, 100)}, func(r *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		cl.Close()
		if firstErr != nil {
			t.Fatalf("produce with %v: %v", codec, firstErr)
		}
	}
	total := int64(perCodec * len(codecs))

	ends, err := adm.ListEndOffsets(ctx, "kgo")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Errorf("end offset %d: %v", o.Partition, o.Err)
		}
		sum += o.Offset
	})
	if sum != total {
		t.Fatalf("end offsets sum to %d, produced %d", sum, total)
	}

	// DeleteRecords raises partition 0's start.
	end0, _ := ends.Lookup("kgo", 0)
	cut := end0.Offset / 2
	deleted, err := adm.DeleteRecords(ctx, kadm.Offsets{"kgo": {0: {Topic: "kgo", Partition: 0, At: cut}}})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := deleted.Lookup("kgo", 0); !ok || d.Err != nil || d.LowWatermark != cut {
		t.Fatalf("delete records: %+v", d)
	}
	starts, err := adm.ListStartOffsets(ctx, "kgo")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := starts.Lookup("kgo", 0); s.Offset != cut {
		t.Fatalf("start offset after DeleteRecords: %d, want %d", s.Offset, cut)
	}
	if s, _ := starts.Lookup("kgo", 1); s.Offset != 0 {
		t.Fatalf("partition 1 start: %d", s.Offset)
	}
	// By time: everything was written in the last minute.
	byTime, err := adm.ListOffsetsAfterMilli(ctx, time.Now().Add(-time.Minute).UnixMilli(), "kgo")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := byTime.Lookup("kgo", 1); o.Err != nil || o.Offset != 0 {
		t.Fatalf("offset after a minute ago: %+v", o)
	}

	// After a restart the offsets, the log start and the producers'
	// state are still there; a new idempotent producer carries on.
	n.Restart()
	adm, _ = n.Admin(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.DefaultProduceTopic("kgo"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Partition: 0, Value: []byte("after restart")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ends2, err := adm.ListEndOffsets(ctx, "kgo")
	if err != nil {
		t.Fatal(err)
	}
	var sum2 int64
	ends2.Each(func(o kadm.ListedOffset) { sum2 += o.Offset })
	if sum2 != total+1 {
		t.Fatalf("end offsets after restart sum to %d, want %d", sum2, total+1)
	}
	starts, _ = adm.ListStartOffsets(ctx, "kgo")
	if s, _ := starts.Lookup("kgo", 0); s.Offset != cut {
		t.Fatalf("start offset after restart: %d, want %d", s.Offset, cut)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "kgo-0", "*.snapshot")); len(m) == 0 {
		t.Fatal("no producer-state snapshot written at close")
	}
}
