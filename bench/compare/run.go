package compare

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/samsa-io/samsa/bench"
)

// Measurement is one figure with where it came from.
type Measurement struct {
	Config string `json:"config"`
	Round  int    `json:"round"`
	Figure
}

// Failure is a workload that did not complete.
type Failure struct {
	Config   string `json:"config"`
	Round    int    `json:"round"`
	Workload string `json:"workload"`
	Error    string `json:"error"`
}

// Run is a whole comparison.
type Run struct {
	Started      time.Time     `json:"started"`
	Finished     time.Time     `json:"finished"`
	Scale        float64       `json:"scale"`
	Rounds       int           `json:"rounds"`
	Configs      []ConfigInfo  `json:"configs"`
	Workloads    []WorkloadDoc `json:"workloads"`
	Measurements []Measurement `json:"measurements"`
	Failures     []Failure     `json:"failures"`
	Machine      Machine       `json:"machine"`
	Command      string        `json:"command"`
}

// ConfigInfo describes a broker configuration for the report.
type ConfigInfo struct {
	Name, Broker, Settings string
	Durable                bool
	// Brokers is how many brokers the configuration runs: 0 (reports
	// written before there were clusters) or 1 for a single node,
	// ClusterBrokers for a replicated system.
	Brokers int `json:",omitempty"`
}

// Replicated reports whether c is a cluster.
func (c ConfigInfo) Replicated() bool { return c.Brokers > 1 }

// WorkloadDoc describes a workload for the report.
type WorkloadDoc struct {
	Name, Command string
	Brokers       int `json:",omitempty"` // as ConfigInfo.Brokers
}

// Execute runs every workload against every configuration, rounds times,
// configurations in turn within a round.
func Execute(ctx context.Context, configs []Config, workloads []Workload, rounds int, scale float64, log *slog.Logger) *Run {
	r := &Run{Started: time.Now().UTC(), Scale: scale, Rounds: rounds, Machine: DescribeMachine()}
	for _, c := range configs {
		r.Configs = append(r.Configs, ConfigInfo{Name: c.Name, Broker: c.Broker, Settings: c.Settings, Durable: c.Durable, Brokers: 1})
	}
	for _, w := range workloads {
		r.Workloads = append(r.Workloads, WorkloadDoc{Name: w.Name, Command: w.Command, Brokers: 1})
	}
	startupName := "6 startup and idle memory"
	for round := 1; round <= rounds && ctx.Err() == nil; round++ {
		for _, c := range configs {
			if ctx.Err() != nil {
				break
			}
			add := func(f Figure) { r.Measurements = append(r.Measurements, Measurement{c.Name, round, f}) }
			fail := func(w string, err error) {
				log.Error("workload failed", "config", c.Name, "round", round, "workload", w, "err", err)
				r.Failures = append(r.Failures, Failure{c.Name, round, w, err.Error()})
			}
			log.Info("starting broker", "config", c.Name, "round", round)
			b, err := Start(ctx, c, 180*time.Second)
			if err != nil {
				fail(startupName, err)
				continue
			}
			add(Figure{startupName, "first accepted connection", "ms", ms(b.Startup), true})
			add(Figure{startupName, "first Metadata answer", "ms", ms(b.Ready), true})
			add(Figure{startupName, "idle RSS", "MiB", mib(b.IdleRSS), true})
			if err := warmUp(ctx, b, scale); err != nil {
				fail("warm-up", err)
			}
			for _, w := range workloads {
				if ctx.Err() != nil {
					break
				}
				if c.TLS != nil && w.PlaintextOnly {
					continue
				}
				runWorkload(ctx, log, c.Name, round, w.Name, func(ctx context.Context) ([]Figure, error) { return w.Run(ctx, b) }, add, fail)
			}
			if u, err := b.Usage(); err == nil {
				add(Figure{startupName, "peak RSS (whole run)", "MiB", mib(u.PeakRSS), true})
			}
			if err := b.Stop(); err != nil {
				log.Warn("broker stop", "config", c.Name, "err", err)
			}
		}
	}
	r.Finished = time.Now().UTC()
	return r
}

// runWorkload runs one workload of configuration config (at most 10
// minutes) and adds its figures, or records its failure.
func runWorkload(ctx context.Context, log *slog.Logger, config string, round int, name string,
	run func(context.Context) ([]Figure, error), add func(Figure), fail func(string, error)) {
	log.Info("workload", "config", config, "round", round, "workload", name)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	begin := time.Now()
	figs, err := run(wctx)
	if err != nil {
		fail(name, err)
		return
	}
	log.Info("workload done", "config", config, "workload", name, "elapsed", time.Since(begin).Round(time.Millisecond))
	for _, f := range figs {
		add(f)
	}
}

// warmUp produces and reads back an unmeasured topic so that neither
// broker is measured cold (the JVM's JIT compiler, samsa's first segment
// files and pools).
func warmUp(ctx context.Context, b *Running, scale float64) error {
	w := bench.DefaultWorkload()
	w.Brokers, w.TLS, w.Topic, w.Records = []string{b.Addr}, b.Config.TLS, "warm-up", scaled(200_000, scale, 20_000)
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	res, err := bench.RunProduce(wctx, w, nil)
	if err == nil && res.Errors > 0 {
		err = fmt.Errorf("%d records failed: %s", res.Errors, res.FirstError)
	}
	if err == nil {
		_, err = bench.RunConsume(wctx, w, nil)
	}
	return err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mib(b int64) float64        { return float64(b) / (1 << 20) }

// Stats summarises one figure over rounds.
type Stats struct {
	Mean, Min, Max float64
	N              int
}

// Spread is (max-min)/mean, the relative spread between rounds.
func (s Stats) Spread() float64 {
	if s.N < 2 || s.Mean == 0 {
		return 0
	}
	return (s.Max - s.Min) / math.Abs(s.Mean)
}

// Summarise returns the statistics of every (workload, metric, config).
func Summarise(ms []Measurement) map[Key]Stats {
	out := map[Key]Stats{}
	for _, m := range ms {
		if math.IsNaN(m.Value) {
			continue
		}
		k := Key{m.Workload, m.Metric, m.Config}
		s, ok := out[k]
		if !ok {
			s = Stats{Min: m.Value, Max: m.Value}
		}
		s.Mean = (s.Mean*float64(s.N) + m.Value) / float64(s.N+1)
		s.N++
		s.Min = math.Min(s.Min, m.Value)
		s.Max = math.Max(s.Max, m.Value)
		out[k] = s
	}
	return out
}

// Key names one summarised figure.
type Key struct{ Workload, Metric, Config string }
