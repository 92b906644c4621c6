package compare

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// TestCleanerCompare times samsa's and Apache Kafka 4.1.1's log cleaners
// on the same data in one run (set BENCH_CLEANER=1; it needs Maven's
// Kafka jars and a minute or two). The figures are logged: cleaning
// MB/s and resident memory. It fails only if a broker does not clean.
func TestCleanerCompare(t *testing.T) {
	if os.Getenv("BENCH_CLEANER") == "" {
		t.Skip("set BENCH_CLEANER=1 to compare the log cleaners with Kafka's")
	}
	bin, err := testkit.SamsaBinary()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := KafkaClassPath("../../interop/java", filepath.Join(os.Getenv("HOME"), ".m2", "repository"))
	if err != nil {
		t.Skip(err)
	}
	w := CleanWorkload{Keys: 100_000, Rounds: 6, ValueBytes: 200, SegmentMiB: 16}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for _, c := range CleanerConfigs(bin, cp) {
		res, err := CompareCleaning(ctx, c, w)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		t.Logf("%-6s cleaned %6.1f MB into %5.1f MB in %v: %6.1f MB/s; RSS idle %4d MiB, while cleaning up to %4d MiB",
			res.Config, float64(res.LogBytes)/1e6, float64(res.AfterBytes)/1e6, res.Took.Round(time.Millisecond), res.MBps,
			res.IdleRSS>>20, res.PeakRSS>>20)
	}
}
