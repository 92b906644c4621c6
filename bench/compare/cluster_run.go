package compare

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/samsa-io/samsa/bench"
)

// ExecuteReplicated runs every replicated workload against every cluster
// configuration, rounds times, configurations in turn within a round
// (never two clusters at once), and adds the figures to r beside the
// single-node ones.
func (r *Run) ExecuteReplicated(ctx context.Context, configs []ClusterConfig, workloads []ClusterWorkload, rounds int, log *slog.Logger) {
	if len(configs) == 0 || len(workloads) == 0 {
		return
	}
	for _, c := range configs {
		r.Configs = append(r.Configs, ConfigInfo{Name: c.Name, Broker: c.Broker, Settings: c.Settings, Durable: c.Durable, Brokers: ClusterBrokers})
	}
	for _, w := range workloads {
		r.Workloads = append(r.Workloads, WorkloadDoc{Name: w.Name, Command: w.Command, Brokers: ClusterBrokers})
	}
	r.Rounds = max(r.Rounds, rounds)
	for round := 1; round <= rounds && ctx.Err() == nil; round++ {
		for _, c := range configs {
			if ctx.Err() != nil {
				break
			}
			r.runCluster(ctx, c, workloads, round, log)
		}
	}
	r.Finished = time.Now().UTC()
}

func (r *Run) runCluster(ctx context.Context, c ClusterConfig, workloads []ClusterWorkload, round int, log *slog.Logger) {
	add := func(f Figure) { r.Measurements = append(r.Measurements, Measurement{c.Name, round, f}) }
	fail := func(w string, err error) {
		log.Error("workload failed", "config", c.Name, "round", round, "workload", w, "err", err)
		r.Failures = append(r.Failures, Failure{c.Name, round, w, err.Error()})
	}
	log.Info("starting cluster", "config", c.Name, "round", round, "brokers", ClusterBrokers)
	rc, err := StartCluster(ctx, c, 3*time.Minute)
	if err != nil {
		fail(replicatedMemory, err)
		return
	}
	defer func() {
		if err := rc.Stop(); err != nil {
			log.Warn("cluster stop", "config", c.Name, "err", err)
		}
	}()
	add(Figure{replicatedMemory, "launch to all brokers listed by all", "s", rc.Ready.Seconds(), true})
	idle, err := rc.Usage()
	if err != nil {
		fail(replicatedMemory, err)
	}
	if err := warmUpCluster(ctx, rc, r.Scale); err != nil {
		fail("warm-up", err)
	}
	for _, w := range workloads {
		if ctx.Err() != nil {
			break
		}
		runWorkload(ctx, log, c.Name, round, w.Name, func(ctx context.Context) ([]Figure, error) { return w.Run(ctx, rc) }, add, fail)
	}
	end, err := rc.Usage()
	if err != nil {
		fail(replicatedMemory, err)
	}
	for _, f := range MemoryFigures(idle, end) {
		add(f)
	}
}

// warmUpCluster produces an unmeasured replicated topic so that no system
// is measured cold: the JVMs' JIT compilers, the followers' fetch
// sessions, samsa's first segment files and pools.
func warmUpCluster(ctx context.Context, rc *RunningCluster, scale float64) error {
	w := replicatedBase("warm-up")
	w.Brokers, w.Records = rc.Addrs(), scaled(200_000, scale, 20_000)
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := rc.ReplicatedTopic(wctx, w.Topic, w.Partitions); err != nil {
		return err
	}
	res, err := bench.RunProduce(wctx, w, nil)
	if err == nil && res.Errors > 0 {
		err = fmt.Errorf("%d records failed: %s", res.Errors, res.FirstError)
	}
	return err
}
