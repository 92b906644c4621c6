package bench

import (
	"context"
	"os"
	"testing"
)

// The probe runs every case for every size, times each operation, and
// leaves nothing behind in the directory it probed.
func TestRunDisk(t *testing.T) {
	dir := t.TempDir()
	res, err := RunDisk(context.Background(), DiskWorkload{Dir: dir, Ops: 20, Sizes: []int{512, 4096}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name string
		size int
	}{{"write", 512}, {"write+fsync", 512}, {"write", 4096}, {"write+fsync", 4096}, {"fsync, nothing dirty", 0}}
	if len(res.Cases) != len(want) {
		t.Fatalf("%d cases, want %d: %+v", len(res.Cases), len(want), res.Cases)
	}
	for i, w := range want {
		c := res.Cases[i]
		if c.Name != w.name || c.Size != w.size || c.Ops != 20 || c.Latency.Count != 20 {
			t.Fatalf("case %d = %+v, want %s of %d bytes with 20 timed ops", i, c, w.name, w.size)
		}
		if c.Name == "write+fsync" && c.CPUPerOp <= 0 {
			t.Fatalf("case %d: an fsync that cost no CPU at all: %+v", i, c)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("probe left %d files behind", len(entries))
	}
	if _, err := RunDisk(context.Background(), DiskWorkload{Dir: dir, Ops: 0, Sizes: []int{1}}); err == nil {
		t.Fatal("a probe of zero operations was accepted")
	}
}
