package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/bench"
)

// newBenchDiskCommand is `samsa bench disk`: the disk probe. It needs no
// broker; point --dir at the broker's log.dirs.
func newBenchDiskCommand(output *string) *cobra.Command {
	w := bench.DiskWorkload{Dir: "./data", Ops: 2000, Sizes: []int{1 << 10, 16 << 10, 256 << 10}}
	cmd := &cobra.Command{
		Use:   "disk",
		Short: "Probe the disk: latency and CPU of a write and of a write+fsync",
		Long: `Probe the disk under --dir (the broker's log.dirs): for each size,
--ops appends without and with an fsync after each, then fsyncs of a clean
file. It prints latency percentiles and the CPU each operation costs the
calling thread. Every durable acknowledgement costs at least one fsync,
so "write+fsync" CPU times fsyncs per second is a floor under the broker's
CPU at the group (default) flush policy.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := os.Stat(w.Dir); err != nil {
				return err
			}
			res, err := bench.RunDisk(cmd.Context(), w)
			if err != nil {
				return err
			}
			if *output == "json" {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			return res.WriteTable(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&w.Dir, "dir", w.Dir, "directory on the disk to probe (the broker's log.dirs)")
	f.IntVar(&w.Ops, "ops", w.Ops, "operations per case")
	f.IntSliceVar(&w.Sizes, "sizes", w.Sizes, "bytes per write, comma-separated")
	return cmd
}
