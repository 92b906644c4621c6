package segment

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/samsa-io/samsa/wire/batchtest"
)

// BenchmarkClean compacts a 64 MiB log on the OS filesystem (page cache
// warm) of 100-byte values over 100,000 keys, written 6 times over in
// batches of 100 records, into 16 MiB segments: the first cleaning of a
// dirty log, offset map included. MB/s is of the log cleaned (each byte
// is read twice, once for the map, once for the rewrite); map-MiB is the
// offset map's memory (24 bytes a key at a 0.9 load factor, as Kafka's),
// heap-MiB the Go heap in use after the run. Each iteration rebuilds the
// log (not timed).
func BenchmarkClean(b *testing.B) {
	const keys, per = 100_000, 100
	value := make([]byte, 100)
	var size int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		d, err := OpenDir(dir, Options{Logger: quietLogger})
		if err != nil {
			b.Fatal(err)
		}
		l, _, err := d.Open("bench", 0, Config{FlushPolicy: FlushNever, SegmentBytes: 16 << 20, RetentionMs: Unlimited, RetentionBytes: Unlimited})
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]batchtest.Record, per)
		for k := 0; l.Size() < 64<<20; k = (k + per) % keys {
			for j := range recs {
				recs[j] = batchtest.Record{Key: fmt.Appendf(nil, "key-%08d", k+j), Value: value, Timestamp: 1}
			}
			if _, err := l.Append(batchtest.Build(recs), 0, 1); err != nil {
				b.Fatal(err)
			}
		}
		if err := l.Roll(1); err != nil {
			b.Fatal(err)
		}
		size = l.Size()
		mapBytes := int64(keys*offsetMapSlot*10/9) + 1<<20
		b.StartTimer()
		st, err := l.Clean(CleanOptions{Now: 1, FirstDirty: -1, UpTo: -1, MapBytes: mapBytes})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if st.MapFull || st.RecordsKept != keys {
			b.Fatalf("kept %d records (map full %v), want %d", st.RecordsKept, st.MapFull, keys)
		}
		b.ReportMetric(float64(mapBytes)/(1<<20), "map-MiB")
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		d.Close()
		b.StartTimer()
	}
	b.SetBytes(size)
}
