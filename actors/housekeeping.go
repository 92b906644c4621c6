package actors

import (
	"time"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/partition"
)

// Housekeeping is the broker's periodic work that no request triggers:
//
//   - every log.retention.check.interval.ms each partition actor applies
//     retention.ms and retention.bytes to its log (whole closed segments
//     only; segment.DeleteExpired);
//   - every log.flush.offset.checkpoint.interval.ms each data directory
//     writes its recovery-point and log-start-offset checkpoints, so the
//     recovery after a crash scans only what was written since;
//   - every replica.high.watermark.checkpoint.interval.ms each data
//     directory writes its replication-offset-checkpoint (the partitions'
//     high watermarks), so a restarted replica starts from its high
//     watermark as Kafka's do.
//
// One goroutine owns the tickers; it touches no partition state itself but
// sends the partition actors a message, so retention runs inside the actor
// that owns the log.

const (
	keyRetentionCheckInterval  = "log.retention.check.interval.ms"
	keyCheckpointFlushInterval = "log.flush.offset.checkpoint.interval.ms"
)

// startHousekeeping starts the tickers; stopHousekeeping ends them.
func (b *Broker) startHousekeeping() {
	retention := time.Duration(config.ParseInt(b.cfg.Value(keyRetentionCheckInterval))) * time.Millisecond
	checkpoint := time.Duration(config.ParseInt(b.cfg.Value(keyCheckpointFlushInterval))) * time.Millisecond
	hw := time.Duration(config.ParseInt(b.cfg.Value(config.KeyReplicaHWCheckpointInterval))) * time.Millisecond
	b.housekeepingStop = make(chan struct{})
	b.housekeepingDone = make(chan struct{})
	go b.housekeep(retention, checkpoint, hw)
}

func (b *Broker) stopHousekeeping() {
	if b.housekeepingStop == nil {
		return
	}
	close(b.housekeepingStop)
	<-b.housekeepingDone
}

func (b *Broker) housekeep(retention, checkpoint, hwCheckpoint time.Duration) {
	defer close(b.housekeepingDone)
	retain := time.NewTicker(retention)
	defer retain.Stop()
	// 0 turns periodic checkpoints off (they are still written on a clean
	// shutdown), as in Kafka.
	var ckC <-chan time.Time
	if checkpoint > 0 {
		ck := time.NewTicker(checkpoint)
		defer ck.Stop()
		ckC = ck.C
	}
	var hwC <-chan time.Time
	if hwCheckpoint > 0 {
		hw := time.NewTicker(hwCheckpoint)
		defer hw.Stop()
		hwC = hw.C
	}
	for {
		select {
		case <-b.housekeepingStop:
			return
		case now := <-retain.C:
			b.retainAll(now)
			b.passDone("retention")
		case <-ckC:
			b.checkpointAll()
			b.passDone("checkpoint")
		case <-hwC:
			b.checkpointHighWatermarks()
			b.passDone("hw-checkpoint")
		}
	}
}

// passDone tells the test hook (Options.housekept) that a pass is over.
func (b *Broker) passDone(pass string) {
	if b.opts.housekept != nil {
		b.opts.housekept(pass)
	}
}

// retainAll sends every partition actor an applyRetention.
func (b *Broker) retainAll(now time.Time) {
	routes := b.Routes()
	if routes == nil {
		return
	}
	for _, t := range routes.Topics {
		for _, pid := range t.Partitions {
			if pid != nil {
				b.env.Send(pid, &partition.ApplyRetention{Now: now})
			}
		}
	}
}

// checkpointAll writes every data directory's offset checkpoints.
func (b *Broker) checkpointAll() {
	eachDir(b, func(c partition.Checkpointer) error { return c.Checkpoint() },
		"recovery checkpoint not written; a crash now would rescan more of the log")
}

// checkpointHighWatermarks writes every data directory's
// replication-offset-checkpoint.
func (b *Broker) checkpointHighWatermarks() {
	eachDir(b, func(c partition.HWCheckpointer) error { return c.CheckpointHighWatermarks() },
		"high watermark checkpoint not written; a replica restarting now would start from an older high watermark")
}

// eachDir runs write on every data directory that offers C, logging
// failure with the directory.
func eachDir[C any](b *Broker, write func(C) error, failure string) {
	for path, d := range b.dirs {
		c, ok := d.(C)
		if !ok {
			continue
		}
		if err := write(c); err != nil {
			b.log.Warn(failure, "dir", path, "err", err)
		}
	}
}
