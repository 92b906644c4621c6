package segment

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/segment/vfs"
)

// Options configure a Dir. Zero fields take the defaults.
type Options struct {
	FS           vfs.FS       // default vfs.OS
	Clock        Clock        // timers for FlushInterval; default the system clock
	Logger       *slog.Logger // default slog.Default()
	MaxOpenFiles int          // segment files kept open across all logs; default 1024
	FlushWorkers int          // goroutines running group commits; default 4
	// GroupGatherMax bounds how long a group commit waits for the
	// producers the previous fsync acknowledged to append again before it
	// starts the next fsync (only when more than one was acknowledged).
	// Default 1ms; negative disables the wait.
	GroupGatherMax time.Duration
	// ReserveBytes is how far ahead of its end an active segment's file
	// has disk space reserved (fallocate with KEEP_SIZE: the file's size
	// does not change), in steps of this size, so appends skip the
	// filesystem's block allocation. A segment gives back what it did not
	// use when it rolls or closes. Default 1 MiB; negative disables.
	ReserveBytes int64
	// OnFlush, if set, hears every group commit that fsynced something:
	// how long its fsyncs took and how many appenders waiting for
	// durability it acknowledged (the group-commit batch). It runs on a
	// flush worker and must not block (the broker's metrics observe
	// histograms).
	OnFlush func(took time.Duration, acknowledged int)
}

// Dir is one log directory (a log.dirs entry). It owns the
// recovery-point and log-start-offset checkpoints, the clean-shutdown
// marker, the bounded cache of open segment files and the flush workers
// shared by its logs. Its methods are safe for concurrent use; the Logs it
// opens belong to their callers (see Log).
type Dir struct {
	path   string
	fs     vfs.FS
	clock  Clock
	logger *slog.Logger

	gatherMax time.Duration
	onFlush   func(took time.Duration, acknowledged int) // Options.OnFlush
	reserve   reserver
	cache     *fileCache
	pool      *flushPool

	startedClean bool

	mu           sync.Mutex
	closed       bool
	logs         map[TopicPartition]*Log
	recovery     map[TopicPartition]int64 // of logs not open
	logStart     map[TopicPartition]int64 // of logs not open
	hws          map[TopicPartition]int64 // high watermarks of logs not open (replication-offset-checkpoint)
	clean        map[TopicPartition]bool  // opened this session; true once closed cleanly
	checkpointed map[TopicPartition]int64 // recovery points in the file

	ckMu sync.Mutex // one checkpoint write at a time

	cleanerCk cleanerCheckpoints // cleaner-offset-checkpoint (clean_checkpoint.go)
}

// OpenDir opens (creating it if needed) the log directory at path. If the
// clean-shutdown marker is present, logs opened from it skip scanning;
// the marker is removed so that a crash from now on is seen as unclean.
func OpenDir(path string, opts Options) (*Dir, error) {
	if opts.FS == nil {
		opts.FS = vfs.OS
	}
	if opts.Clock == nil {
		opts.Clock = systemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxOpenFiles <= 0 {
		opts.MaxOpenFiles = 1024
	}
	if opts.FlushWorkers <= 0 {
		opts.FlushWorkers = 4
	}
	if opts.GroupGatherMax == 0 {
		opts.GroupGatherMax = time.Millisecond
	}
	if opts.ReserveBytes == 0 {
		opts.ReserveBytes = 1 << 20
	}
	path = strings.TrimRight(path, "/")
	if _, err := opts.FS.Stat(path); err != nil {
		if err := opts.FS.MkdirAll(path); err != nil {
			return nil, err
		}
		// A new directory's entry is durable once its parent is synced.
		for p := path; p != "/" && p != "."; p = parentDir(p) {
			if err := opts.FS.SyncDir(parentDir(p)); err != nil {
				return nil, err
			}
		}
	}
	d := &Dir{path: path, fs: opts.FS, clock: opts.Clock, logger: opts.Logger, gatherMax: opts.GroupGatherMax, onFlush: opts.OnFlush,
		reserve: reserver{step: max(0, opts.ReserveBytes)},
		cache:   newFileCache(opts.FS, opts.MaxOpenFiles),
		logs:    map[TopicPartition]*Log{}, clean: map[TopicPartition]bool{}}
	var err error
	if d.recovery, err = readOffsetCheckpoint(d.fs, path+"/"+RecoveryPointFile, d.logger,
		"logs not shut down cleanly are recovered from their first segment"); err != nil {
		return nil, err
	}
	if d.logStart, err = readOffsetCheckpoint(d.fs, path+"/"+LogStartFile, d.logger,
		"each log starts at its first segment: records deleted with DeleteRecords there are readable again until retention removes them"); err != nil {
		return nil, err
	}
	if d.hws, err = readOffsetCheckpoint(d.fs, path+"/"+ReplicationFile, d.logger,
		"replicas restart with no high watermark and learn it again from their leader (consumers see nothing new until then)"); err != nil {
		return nil, err
	}
	d.checkpointed = map[TopicPartition]int64{}
	for k, v := range d.recovery {
		d.checkpointed[k] = v
	}
	marker := path + "/" + CleanShutdownFile
	if _, err := d.fs.Stat(marker); err == nil {
		d.startedClean = true
		if err := d.fs.Remove(marker); err != nil {
			return nil, err
		}
		if err := d.fs.SyncDir(path); err != nil {
			return nil, err
		}
	}
	d.pool = newFlushPool(opts.FlushWorkers)
	return d, nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// StartedClean reports whether the previous session ended with Close.
func (d *Dir) StartedClean() bool { return d.startedClean }

// PartitionDir is the directory of a partition: "<topic>-<partition>".
func (d *Dir) PartitionDir(topic string, partition int32) string {
	return fmt.Sprintf("%s/%s-%d", d.path, topic, partition)
}

// Open opens the log of a partition, creating it when it does not exist,
// and recovers it if the last session did not close it cleanly.
func (d *Dir) Open(topic string, partition int32, cfg Config) (*Log, RecoveryReport, error) {
	tp := TopicPartition{topic, partition}
	if topic == "" || strings.ContainsAny(topic, "/ \n") || partition < 0 {
		return nil, RecoveryReport{}, fmt.Errorf("segment: invalid partition %q %d", topic, partition)
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, RecoveryReport{}, ErrDirClosed
	}
	if d.logs[tp] != nil {
		d.mu.Unlock()
		return nil, RecoveryReport{}, fmt.Errorf("%w: %s", ErrAlreadyOpen, tp)
	}
	clean, seen := d.clean[tp]
	if !seen {
		clean = d.startedClean
	}
	rp, ok := d.recovery[tp]
	if !ok {
		rp = -1
	}
	ls, ok := d.logStart[tp]
	if !ok {
		ls = -1
	}
	hw, ok := d.hws[tp]
	if !ok {
		hw = noHighWatermark
	}
	d.logs[tp] = nil // reserve while opening
	d.clean[tp] = false
	d.mu.Unlock()

	l, rep, err := d.openPartition(tp, cfg, clean, rp, ls, hw)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		delete(d.logs, tp)
		d.clean[tp] = clean
		return nil, rep, err
	}
	d.logs[tp] = l
	delete(d.recovery, tp)
	delete(d.logStart, tp)
	delete(d.hws, tp)
	return l, rep, nil
}

func (d *Dir) openPartition(tp TopicPartition, cfg Config, clean bool, rp, ls, hw int64) (*Log, RecoveryReport, error) {
	dir := d.PartitionDir(tp.Topic, tp.Partition)
	if _, err := d.fs.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := d.fs.MkdirAll(dir); err != nil {
			return nil, RecoveryReport{}, err
		}
		if err := d.fs.SyncDir(d.path); err != nil {
			return nil, RecoveryReport{}, err
		}
		// A new log: checkpoint entries under its name are left by a
		// deleted one whose removal could not rewrite the checkpoints
		// (or the directory was lost, which Kafka too answers with a
		// new log).
		if rp > 0 || ls > 0 {
			d.logger.Warn("segment: checkpoints name a partition that has no directory; creating an empty log and ignoring them",
				"partition", tp.String(), "recovery_point", rp, "log_start", ls)
		}
		rp, ls, hw = -1, -1, noHighWatermark
	} else if err != nil {
		return nil, RecoveryReport{}, err
	}
	l, rep, err := d.openLog(tp, dir, cfg, clean, rp, ls)
	if err == nil {
		l.hw.Store(hw)
	}
	return l, rep, err
}

// forgetLog records a log's state when it closes.
func (d *Dir) forgetLog(l *Log, clean bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.logs[l.tp] == l {
		delete(d.logs, l.tp)
	}
	d.recovery[l.tp] = l.fl.durableOffset()
	d.logStart[l.tp] = l.LogStartOffset()
	d.hws[l.tp] = l.checkpointHighWatermark()
	d.clean[l.tp] = clean
}

// Checkpoint writes the recovery-point, log-start-offset and
// replication (high watermark) checkpoint files from the current state of every log (call it periodically, as
// Kafka does every minute). Each log also writes them itself after a
// segment roll, once the rolled segment is fsynced.
func (d *Dir) Checkpoint() error {
	d.ckMu.Lock()
	defer d.ckMu.Unlock()
	return d.checkpointLocked()
}

// checkpointAfterRoll writes the checkpoints once a log's rolled segment
// is fsynced (the flusher calls it), so a crash rescans from the active
// segment instead of from wherever the last periodic checkpoint left
// the recovery point (a minute of appends by default). A failure costs
// only that and is logged; the next checkpoint tries again.
func (d *Dir) checkpointAfterRoll() {
	if err := d.Checkpoint(); err != nil {
		d.logger.Warn("segment: recovery checkpoint after a segment roll not written; a crash now would rescan more of the log",
			"dir", d.path, "err", err)
	}
}

// checkpointIfAbove rewrites the checkpoints if the recovery point on
// disk for tp is above offset, or always with force. The check and the
// write happen under the checkpoint lock, so a checkpoint that read tp's
// recovery point before the caller lowered it has finished (and is
// seen) before the check: it cannot land after the caller's cut.
func (d *Dir) checkpointIfAbove(tp TopicPartition, offset int64, force bool) error {
	d.ckMu.Lock()
	defer d.ckMu.Unlock()
	d.mu.Lock()
	v, ok := d.checkpointed[tp]
	d.mu.Unlock()
	if !force && (!ok || v <= offset) {
		return nil
	}
	return d.checkpointLocked()
}

// checkpointLocked is Checkpoint; the caller holds ckMu.
func (d *Dir) checkpointLocked() error {
	d.mu.Lock()
	rps := map[TopicPartition]int64{}
	starts := map[TopicPartition]int64{}
	for tp, v := range d.recovery {
		rps[tp] = v
	}
	for tp, v := range d.logStart {
		starts[tp] = v
	}
	for tp, l := range d.logs {
		if l != nil {
			rps[tp] = l.fl.durableOffset()
			starts[tp] = l.LogStartOffset()
		}
	}
	d.mu.Unlock()
	if err := vfs.WriteFileAtomic(d.fs, d.path+"/"+RecoveryPointFile, encodeOffsetCheckpoint(rps)); err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(d.fs, d.path+"/"+LogStartFile, encodeOffsetCheckpoint(starts)); err != nil {
		return err
	}
	if err := d.writeHighWatermarks(); err != nil {
		return err
	}
	d.mu.Lock()
	d.checkpointed = rps
	d.mu.Unlock()
	return nil
}

// Partitions lists the partition directories present on disk.
func (d *Dir) Partitions() ([]TopicPartition, error) {
	names, err := d.fs.List(d.path)
	if err != nil {
		return nil, err
	}
	var out []TopicPartition
	for _, n := range names {
		i := strings.LastIndexByte(n, '-')
		if i <= 0 {
			continue
		}
		p, err := strconv.ParseInt(n[i+1:], 10, 32)
		if err != nil || p < 0 {
			continue
		}
		if st, err := d.fs.Stat(d.path + "/" + n); err != nil || !st.IsDir {
			continue
		}
		out = append(out, TopicPartition{n[:i], int32(p)})
	}
	return out, nil
}

// Remove deletes a partition's files (DeleteTopics). An open log of it is
// closed first without flushing; its readers' regions stay valid. Nothing
// is written, so a full disk does not stop it: the checkpoints are then
// rewritten without the partition, and if that fails (logged) the stale
// entries do no harm, because a log created later under the same name
// ignores them.
func (d *Dir) Remove(topic string, partition int32) error {
	tp := TopicPartition{topic, partition}
	d.mu.Lock()
	l := d.logs[tp]
	delete(d.logs, tp)
	delete(d.recovery, tp)
	delete(d.logStart, tp)
	delete(d.hws, tp)
	delete(d.clean, tp)
	d.mu.Unlock()
	if l != nil {
		l.closed = true
		l.fl.close()
		for _, s := range l.segs {
			d.cache.forget(s.logPath)
		}
	}
	dir := d.PartitionDir(topic, partition)
	if err := d.fs.RemoveAll(dir); err != nil {
		return err
	}
	if err := d.fs.SyncDir(d.path); err != nil {
		return err
	}
	if err := d.Checkpoint(); err != nil {
		d.logger.Warn("segment: checkpoints not rewritten after deleting a partition; its entries stay until the next checkpoint",
			"partition", tp.String(), "err", err)
	}
	d.forgetCleanerCheckpoint(tp) // clean_checkpoint.go
	return nil
}

// Close closes every log still open (their owners must have stopped
// using them), writes the checkpoints and, when every log closed cleanly,
// the clean-shutdown marker so the next open skips scanning.
func (d *Dir) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrDirClosed
	}
	d.closed = true
	var open []*Log
	for _, l := range d.logs {
		if l != nil {
			open = append(open, l)
		}
	}
	d.mu.Unlock()
	var firstErr error
	for _, l := range open {
		if err := l.Close(); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("segment: close %s: %w", l.tp, err)
		}
	}
	d.pool.close()
	if err := d.Checkpoint(); err != nil && firstErr == nil {
		firstErr = err
	}
	d.cache.closeAll()
	if firstErr != nil {
		return firstErr
	}
	if ok, err := d.allClean(); err != nil || !ok {
		return err
	}
	return vfs.WriteFileAtomic(d.fs, d.path+"/"+CleanShutdownFile, []byte(`{"version":0,"brokerEpoch":-1}`))
}

// allClean reports whether every partition on disk is known to be in a
// clean state: closed cleanly this session, or untouched since a clean
// start.
func (d *Dir) allClean() (bool, error) {
	parts, err := d.Partitions()
	if err != nil {
		return false, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, tp := range parts {
		c, seen := d.clean[tp]
		if seen && !c || !seen && !d.startedClean {
			return false, nil
		}
	}
	return true, nil
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	}
	return p[:i]
}
