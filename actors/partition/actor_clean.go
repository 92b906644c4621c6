package partition

import (
	"time"

	"github.com/samsa-io/samsa/segment"
)

// The log cleaner's hook (actors/cleaner). A cleaning's slow part, the
// offset map and the rewrite, runs on a cleaner goroutine; the partition
// actor only answers how dirty its log is, takes the snapshot
// (segment.Log.PrepareClean) and swaps the cleaned segments in
// (CommitClean). Both run between other messages, so a fetch reads the
// old segments or the new ones, never a mix, and a read in flight keeps
// its old files open until it is released. The actor owns the log's
// cleaner checkpoint: it moves it once a swap is durable.
type (
	// CleanQuery asks how much of the log a cleaning could take.
	CleanQuery struct {
		Now   time.Time
		Reply chan<- CleanState // buffered: the actor never waits on it
	}

	// CleanState is a partition's answer to CleanQuery.
	CleanState struct {
		Topic      string
		Partition  int32
		Compact    bool  // cleanup.policy has compact (otherwise nothing else is set)
		CleanBytes int64 // closed segments below the cleaner checkpoint
		DirtyBytes int64 // closed, cleanable segments from it on
		MinRatio   float64
		// MustClean: a dirty record is older than max.compaction.lag.ms,
		// so the log is cleaned whatever its dirty ratio.
		MustClean bool
		Err       error
	}

	// CleanPrepare asks the partition to snapshot its log for a cleaning.
	CleanPrepare struct {
		Now        time.Time
		MapBytes   int64
		LoadFactor float64
		Throttle   func(bytes int64)
		Stop       <-chan struct{} // closed: the cleaning is abandoned (the broker stops)
		Reply      chan<- CleanPrepared
	}

	// CleanPrepared carries the job (nil: nothing to clean).
	CleanPrepared struct {
		Job *segment.CleanJob
		Err error
	}

	// CleanCommit asks the partition to swap a job's cleaned segments in.
	CleanCommit struct {
		Job   *segment.CleanJob
		Reply chan<- CleanCommitted
	}

	// CleanCommitted is the swap's outcome.
	CleanCommitted struct {
		Stats segment.CleanStats
		Err   error
	}
)

// cleanerCheckpoints is the part of a data directory that keeps the
// cleaner-offset-checkpoint (segment.Dir).
type cleanerCheckpoints interface {
	CleanerCheckpoint(tp segment.TopicPartition) (int64, bool, error)
	SetCleanerCheckpoint(tp segment.TopicPartition, offset int64) error
}

func (p *partitionActor) tp() segment.TopicPartition {
	return segment.TopicPartition{Topic: p.spec.Topic, Partition: p.spec.Partition}
}

// cleanBounds returns where the log's dirty section starts (the cleaner
// checkpoint; -1 when the log start) and the first offset a cleaning may
// not touch: the high watermark, the last stable offset (an open
// transaction's records cannot be judged yet) and min.compaction.lag.ms.
func (p *partitionActor) cleanBounds(now time.Time) (firstDirty, upTo int64, err error) {
	firstDirty = -1
	if ck, ok := p.dir.(cleanerCheckpoints); ok {
		v, found, err := ck.CleanerCheckpoint(p.tp())
		if err != nil {
			return 0, 0, err
		}
		// An offset past the log end is a checkpoint of a log since
		// truncated or recreated: it is cleaned from its start again.
		if found && v <= p.plog.LogEndOffset() {
			firstDirty = v
		}
	}
	upTo = max(min(p.highWatermark(), p.lastStableOffset()), 0)
	if lag := p.spec.Config.MinCompactionLag; lag > 0 {
		b, err := p.plog.FirstSegmentAfter(now.Add(-lag).UnixMilli())
		if err != nil {
			return 0, 0, err
		}
		if b >= 0 {
			upTo = min(upTo, b)
		}
	}
	return firstDirty, upTo, nil
}

func (p *partitionActor) cleanQuery(m *CleanQuery) {
	st := CleanState{Topic: p.spec.Topic, Partition: p.spec.Partition, Compact: p.spec.Config.Compact && p.plog != nil}
	if !st.Compact {
		m.Reply <- st
		return
	}
	st.MinRatio = p.spec.Config.MinCleanableRatio
	firstDirty, upTo, err := p.cleanBounds(m.Now)
	if err != nil {
		st.Err = err
		m.Reply <- st
		return
	}
	st.CleanBytes, st.DirtyBytes = p.plog.Dirty(firstDirty, upTo)
	if lag := p.spec.Config.MaxCompactionLag; st.DirtyBytes > 0 && lag >= 0 && lag < time.Duration(maxTimerMs)*time.Millisecond {
		oldest, err := p.plog.OldestDirtyTimestamp(firstDirty)
		st.Err = err
		st.MustClean = oldest >= 0 && m.Now.UnixMilli()-oldest > lag.Milliseconds()
	}
	m.Reply <- st
}

func (p *partitionActor) cleanPrepare(m *CleanPrepare) {
	if p.plog == nil || !p.spec.Config.Compact {
		m.Reply <- CleanPrepared{}
		return
	}
	firstDirty, upTo, err := p.cleanBounds(m.Now)
	if err != nil {
		m.Reply <- CleanPrepared{Err: err}
		return
	}
	job, err := p.plog.PrepareClean(segment.CleanOptions{
		Now: m.Now.UnixMilli(), DeleteRetentionMs: p.spec.Config.DeleteRetention.Milliseconds(),
		FirstDirty: firstDirty, UpTo: upTo, MapBytes: m.MapBytes, LoadFactor: m.LoadFactor, Throttle: m.Throttle, Stop: m.Stop,
	})
	m.Reply <- CleanPrepared{Job: job, Err: err}
}

func (p *partitionActor) cleanCommit(m *CleanCommit) {
	if p.plog == nil {
		m.Job.Abort()
		m.Reply <- CleanCommitted{Err: segment.ErrCleanStale}
		return
	}
	st, err := p.plog.CommitClean(m.Job)
	if err == nil && st.EndOffset >= 0 {
		if ck, ok := p.dir.(cleanerCheckpoints); ok {
			if cerr := ck.SetCleanerCheckpoint(p.tp(), st.EndOffset); cerr != nil {
				// The swap stands; the next cleaning redoes the work.
				p.log.Warn("cleaner checkpoint not written; the log's next cleaning starts from an older offset", append(p.attrs(), "err", cerr)...)
			}
		}
	}
	if err != nil && err != segment.ErrCleanStale {
		p.log.Error("cleaned segments could not be swapped in; the log has failed, and reopening it (a restart) finishes or undoes the swap", append(p.attrs(), "err", err)...)
	}
	m.Reply <- CleanCommitted{Stats: st, Err: err}
}
