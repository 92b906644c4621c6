package actors

import (
	"time"

	"github.com/samsa-io/samsa/actors/cleaner"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/metrics"
)

// The log cleaner (actors/cleaner) compacts cleanup.policy=compact logs;
// it runs unless log.cleaner.enable=false, with the cleaner keys as set
// at start.

func (b *Broker) startCleaner() {
	if !config.ParseBool(b.cfg.Value("log.cleaner.enable")) {
		return
	}
	threads := int(config.ParseInt(b.cfg.Value("log.cleaner.threads")))
	if threads <= 0 {
		return
	}
	b.cleaner = cleaner.New(cleaner.Config{
		Threads:          threads,
		Backoff:          time.Duration(config.ParseInt(b.cfg.Value("log.cleaner.backoff.ms"))) * time.Millisecond,
		DedupeBufferSize: config.ParseInt(b.cfg.Value("log.cleaner.dedupe.buffer.size")),
		LoadFactor:       config.ParseFloat(b.cfg.Value("log.cleaner.io.buffer.load.factor")),
		MaxBytesPerSec:   config.ParseFloat(b.cfg.Value("log.cleaner.io.max.bytes.per.second")),
	}, b.Routes, b.env.Send, b.opts.Now, b.log)
	b.cleaner.Start()
	st := b.cleaner.Stats()
	b.env.Metrics.WatchCleaner(func() metrics.CleanerStats {
		return metrics.CleanerStats{Cleanings: st.Cleanings.Load(), BytesRead: st.BytesRead.Load(),
			BytesWritten: st.BytesWritten.Load(), Failures: st.Failures.Load()}
	})
}

func (b *Broker) stopCleaner() {
	if b.cleaner != nil {
		b.cleaner.Stop()
	}
}

// Cleaner is the broker's log cleaner, nil when log.cleaner.enable=false.
func (b *Broker) Cleaner() *cleaner.Cleaner { return b.cleaner }
