package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"
)

// DiskWorkload is a disk probe: how long, and how much CPU, a write and a
// durable write (write then fsync, as the log's group commit does) take
// on the file system of Dir. Every durable acknowledgement the broker
// gives costs at least one fsync of some partition, so the probe's
// cpu/op for write+fsync, times the fsyncs per second a workload needs,
// is a floor under the broker's CPU that no broker code can lower.
type DiskWorkload struct {
	Dir   string // where the probe file is made (the broker's log.dirs)
	Ops   int    // operations per case
	Sizes []int  // bytes per write
}

// DiskCase is one probe case's outcome.
type DiskCase struct {
	Name     string        `json:"name"`
	Size     int           `json:"size"`
	Ops      int           `json:"ops"`
	Latency  Summary       `json:"latency"`
	CPUPerOp time.Duration `json:"cpu_per_op_ns"` // this thread's user+system CPU
}

// DiskResult is the probe's outcome.
type DiskResult struct {
	Dir   string     `json:"dir"`
	Cases []DiskCase `json:"cases"`
}

// RunDisk runs the probe. The file it writes is removed afterwards.
func RunDisk(ctx context.Context, w DiskWorkload) (DiskResult, error) {
	if w.Ops <= 0 || len(w.Sizes) == 0 {
		return DiskResult{}, errors.New("bench: disk probe needs ops > 0 and at least one size")
	}
	f, err := os.CreateTemp(w.Dir, ".samsa-disk-probe-*")
	if err != nil {
		return DiskResult{}, fmt.Errorf("bench: disk probe: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	res := DiskResult{Dir: w.Dir}
	if abs, err := filepath.Abs(w.Dir); err == nil {
		res.Dir = abs
	}
	// One OS thread for the whole probe, so its CPU can be read per thread
	// and nothing else the process does is counted.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, size := range w.Sizes {
		buf := make([]byte, size)
		for i := range buf {
			buf[i] = byte(i)
		}
		cases := []struct {
			name string
			op   func() error
		}{
			{"write", func() error { _, err := f.Write(buf); return err }},
			{"write+fsync", func() error {
				if _, err := f.Write(buf); err != nil {
					return err
				}
				return f.Sync()
			}},
		}
		for _, c := range cases {
			dc, err := probeCase(ctx, c.name, size, w.Ops, c.op)
			if err != nil {
				return res, err
			}
			res.Cases = append(res.Cases, dc)
		}
	}
	// An fsync with nothing to write still asks the device to flush its
	// cache: the fixed part of every durable write.
	if err := f.Sync(); err != nil {
		return res, err
	}
	dc, err := probeCase(ctx, "fsync, nothing dirty", 0, w.Ops, f.Sync)
	if err != nil {
		return res, err
	}
	res.Cases = append(res.Cases, dc)
	return res, nil
}

func probeCase(ctx context.Context, name string, size, ops int, op func() error) (DiskCase, error) {
	lat := NewLatency()
	cpu0 := threadCPU()
	for range ops {
		if err := ctx.Err(); err != nil {
			return DiskCase{}, err
		}
		t0 := time.Now()
		if err := op(); err != nil {
			return DiskCase{}, fmt.Errorf("bench: disk probe %s: %w", name, err)
		}
		lat.Record(time.Since(t0))
	}
	cpu := threadCPU() - cpu0
	return DiskCase{Name: name, Size: size, Ops: ops, Latency: lat.Summary(), CPUPerOp: cpu / time.Duration(ops)}, nil
}

// WriteTable writes the probe's outcome as a table, latencies in µs.
func (r *DiskResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "disk probe\t%s\n", r.Dir)
	fmt.Fprintf(tw, "case\tbytes\tops\tp50 µs\tp99 µs\tmax µs\tCPU µs/op\n")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%.0f\t%.1f\n", c.Name, c.Size, c.Ops,
			c.Latency.P50*1000, c.Latency.P99*1000, c.Latency.Max*1000, float64(c.CPUPerOp)/float64(time.Microsecond))
	}
	return tw.Flush()
}
