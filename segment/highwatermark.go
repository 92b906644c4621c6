package segment

import (
	"github.com/samsa-io/samsa/segment/vfs"
)

// ReplicationFile is the log directory's high-watermark checkpoint
// (Kafka's replication-offset-checkpoint): version line 0, count line,
// then "topic partition highWatermark" lines, like the other offset
// checkpoints.
const ReplicationFile = "replication-offset-checkpoint"

// noHighWatermark marks a log whose owner has not recorded one and whose
// directory's checkpoint named none.
const noHighWatermark = -1

// SetHighWatermark records the partition's high watermark, which the
// directory writes to its replication-offset-checkpoint (periodically,
// CheckpointHighWatermarks, and on Close). The log itself never moves
// it: the high watermark is the replication protocol's, kept by the
// partition; the log only carries it across a restart. Safe from any
// goroutine.
func (l *Log) SetHighWatermark(hw int64) { l.hw.Store(hw) }

// HighWatermark is the last high watermark recorded (SetHighWatermark)
// or, before any, the directory's checkpoint of it when the log opened,
// within [log start, log end] as Kafka clamps it on load: a checkpoint
// never puts a restarted replica's high watermark past what its log
// holds. -1 when neither exists.
func (l *Log) HighWatermark() int64 {
	hw := l.hw.Load()
	if hw < 0 {
		return noHighWatermark
	}
	return min(max(hw, l.LogStartOffset()), l.LogEndOffset())
}

// CheckpointHighWatermarks writes the replication-offset-checkpoint
// alone, from every log's high watermark (Kafka writes it every
// replica.high.watermark.checkpoint.interval.ms, 5 s by default, more
// often than the recovery checkpoints). A log that never had one is
// written at its log start, as Kafka's logs start their high watermark.
func (d *Dir) CheckpointHighWatermarks() error {
	d.ckMu.Lock()
	defer d.ckMu.Unlock()
	return d.writeHighWatermarks()
}

// writeHighWatermarks is CheckpointHighWatermarks; the caller holds ckMu.
func (d *Dir) writeHighWatermarks() error {
	d.mu.Lock()
	hws := make(map[TopicPartition]int64, len(d.hws)+len(d.logs))
	for tp, v := range d.hws {
		hws[tp] = v
	}
	for tp, l := range d.logs {
		if l != nil {
			hws[tp] = l.checkpointHighWatermark()
		}
	}
	d.mu.Unlock()
	return vfs.WriteFileAtomic(d.fs, d.path+"/"+ReplicationFile, encodeOffsetCheckpoint(hws))
}

// checkpointHighWatermark is what the checkpoint says of l: its high
// watermark, or its log start when it never had one.
func (l *Log) checkpointHighWatermark() int64 {
	if hw := l.HighWatermark(); hw >= 0 {
		return hw
	}
	return l.LogStartOffset()
}
