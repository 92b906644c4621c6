package segment

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// buildBenchLog writes a log of about size bytes of 64 KiB batches in dir
// and closes it cleanly.
func buildBenchLog(b *testing.B, dir string, size int64, segmentBytes int64) int64 {
	d, err := OpenDir(dir, Options{Logger: quietLogger})
	if err != nil {
		b.Fatal(err)
	}
	l, _, err := d.Open("bench", 0, Config{FlushPolicy: FlushNever, SegmentBytes: segmentBytes})
	if err != nil {
		b.Fatal(err)
	}
	batch := makeBatch(1, 64<<10-70, 1, 1)
	for l.Size()+int64(len(batch)) <= size {
		if _, err := l.Append(batch, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	total := l.Size()
	if err := d.Close(); err != nil {
		b.Fatal(err)
	}
	return total
}

// BenchmarkRecoveryScan opens a 256 MiB log (4 segments) after an unclean
// shutdown with no recovery checkpoint, so every batch is read and its
// CRC checked; MB/s is the scan rate (page cache warm).
func BenchmarkRecoveryScan(b *testing.B) {
	dir := b.TempDir()
	size := buildBenchLog(b, dir, 256<<20, 64<<20)
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		os.Remove(dir + "/" + CleanShutdownFile)
		os.Remove(dir + "/" + RecoveryPointFile)
		b.StartTimer()
		d, err := OpenDir(dir, Options{Logger: quietLogger})
		if err != nil {
			b.Fatal(err)
		}
		_, rep, err := d.Open("bench", 0, Config{SegmentBytes: 64 << 20})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if rep.Clean || rep.BytesScanned != size || rep.Cut() {
			b.Fatalf("not a full scan: %+v", rep)
		}
		d.Close()
		b.StartTimer()
	}
}

// BenchmarkOpenClean measures opening a log after a clean shutdown, which
// reads only the active segment's indexes and tail. The 1 GiB case runs
// only with SEGMENT_BENCH_1GIB=1 (it writes 1 GiB first):
//
//	SEGMENT_BENCH_1GIB=1 go test -run '^$' -bench OpenClean ./segment/
func BenchmarkOpenClean(b *testing.B) {
	sizes := []int64{16 << 20, 128 << 20}
	if os.Getenv("SEGMENT_BENCH_1GIB") != "" {
		sizes = append(sizes, 1<<30)
	}
	for _, size := range sizes {
		b.Run(fmt.Sprintf("size=%dMiB", size>>20), func(b *testing.B) {
			dir := b.TempDir()
			buildBenchLog(b, dir, size, 0)
			var total time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				d, err := OpenDir(dir, Options{Logger: quietLogger})
				if err != nil {
					b.Fatal(err)
				}
				l, rep, err := d.Open("bench", 0, Config{})
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				b.StopTimer()
				if !rep.Clean || rep.SegmentsScanned != 0 || l.Size() < size-(64<<10) {
					b.Fatalf("not a clean open: %+v size %d", rep, l.Size())
				}
				if err := d.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "ms/open")
		})
	}
}
