package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/samsa-io/samsa/bench"
)

// newBenchCommand groups the load generators: thin front ends over the
// bench package.
func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Load generators: produce, consume, e2e, group; and a disk probe"}
	w := bench.DefaultWorkload()
	var brokers, output, cpuProfile string
	pf := cmd.PersistentFlags()
	pf.StringVar(&brokers, "bootstrap-server", benchBootstrapDefault(), "comma-separated bootstrap brokers")
	pf.StringVar(&w.Topic, "topic", w.Topic, "topic (created when missing)")
	pf.Int32Var(&w.Partitions, "partitions", w.Partitions, "partitions of a created topic (consume: partitions to read)")
	pf.Int64Var(&w.Records, "records", w.Records, "records in total")
	pf.IntVar(&w.RecordSize, "record-size", w.RecordSize, "value bytes per record")
	pf.IntVar(&w.KeySize, "key-size", w.KeySize, "key bytes per record")
	pf.StringVar(&w.KeyDist, "key-dist", w.KeyDist, "key distribution: none, uniform, sequential")
	pf.IntVar(&w.Rate, "rate", w.Rate, "records/s over all producers; 0 = as fast as possible")
	pf.IntVar(&w.Producers, "producers", w.Producers, "concurrent producer clients")
	pf.IntVar(&w.Consumers, "consumers", w.Consumers, "concurrent consumer clients")
	pf.StringVar(&w.Acks, "acks", w.Acks, "0, 1 or all")
	pf.StringVar(&w.Compression, "compression", w.Compression, "none, gzip, snappy, lz4, zstd")
	pf.DurationVar(&w.Linger, "linger", w.Linger, "producer linger")
	pf.Int32Var(&w.BatchBytes, "batch-bytes", w.BatchBytes, "producer max batch bytes")
	pf.IntVar(&w.MaxBuffered, "max-buffered", w.MaxBuffered, "records a producer holds unacknowledged before it blocks; 1 = one record per request")
	pf.BoolVar(&w.Idempotent, "idempotent", w.Idempotent, "use the idempotent producer (needs --acks all)")
	pf.DurationVar(&w.IdleTimeout, "idle-timeout", w.IdleTimeout, "consume: give up after this long without a record (0 = wait for ever)")
	pf.StringVarP(&output, "output", "o", "table", "table or json")
	pf.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the load generator itself to this file")
	var tlsFlags benchTLSFlags
	pf.StringVar(&tlsFlags.ca, "tls-ca", "", "produce, consume, e2e: connect over TLS (an SSL listener), trusting this PEM CA")
	pf.StringVar(&tlsFlags.cert, "tls-cert", "", "with --tls-ca: PEM client certificate (ssl.client.auth=required)")
	pf.StringVar(&tlsFlags.key, "tls-key", "", "with --tls-cert: its PEM private key")

	run := func(fn func(context.Context, bench.Workload, bench.Progress) (bench.Result, error)) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			w.Brokers = strings.Split(brokers, ",")
			tlsCfg, err := tlsFlags.config()
			if err != nil {
				return err
			}
			w.TLS = tlsCfg
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if cpuProfile != "" {
				stopProfile, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stopProfile()
			}
			var progress bench.Progress
			if term.IsTerminal(int(os.Stderr.Fd())) {
				progress = func(done, total int64, elapsed time.Duration) {
					rate := float64(done) / elapsed.Seconds()
					left := "?"
					if rate > 0 {
						left = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second).String()
					}
					fmt.Fprintf(os.Stderr, "\r%d/%d records, %.0f records/s, %s left   ", done, total, rate, left)
				}
			}
			res, err := fn(ctx, w, progress)
			if progress != nil {
				fmt.Fprint(os.Stderr, "\r\033[K")
			}
			if err != nil {
				return err
			}
			if output == "json" {
				err = res.WriteJSON(cmd.OutOrStdout())
			} else {
				err = res.WriteTable(cmd.OutOrStdout())
			}
			if err == nil && res.Errors > 0 {
				err = fmt.Errorf("%d records failed: %s", res.Errors, res.FirstError)
			}
			return err
		}
	}
	cmd.AddCommand(
		&cobra.Command{Use: "produce", Short: "Produce records as fast as possible or at --rate", RunE: run(bench.RunProduce)},
		&cobra.Command{Use: "consume", Short: "Consume --records records from the start", RunE: run(bench.RunConsume)},
		&cobra.Command{Use: "e2e", Short: "Produce at --rate while consuming; end-to-end latency", RunE: run(bench.RunE2E)},
		newBenchGroupCommand(&brokers, &w, &output),
		newBenchRebalanceCommand(&brokers, &w, &output),
		newBenchDiskCommand(&output),
	)
	return cmd
}

// benchBootstrapDefault is $SAMSA_BOOTSTRAP_SERVER, else the local broker.
func benchBootstrapDefault() string {
	if v, ok := os.LookupEnv("SAMSA_BOOTSTRAP_SERVER"); ok {
		return v
	}
	return "127.0.0.1:9092"
}

// startCPUProfile profiles this process (the load generator, not the
// broker) until the returned function is called: the client's own cost
// decides how far a single-machine benchmark can push the broker.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
