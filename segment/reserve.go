package segment

import (
	"errors"
	"sync/atomic"

	"github.com/samsa-io/samsa/segment/vfs"
)

// reserver keeps disk space reserved ahead of active segments
// (Options.ReserveBytes) and gives back what they did not use.
//
// Why: on ext4 a buffered write that extends a file reserves blocks for
// every new page (delayed allocation), which made a 64 KiB pwrite about a
// fifth dearer than the same write into space fallocate had reserved.
// Reserving with KEEP_SIZE leaves the file's size alone, so readers,
// recovery and operators see exactly the batches written; only the
// blocks past the end are taken early.
type reserver struct {
	step int64       // bytes per reservation; 0: off
	off  atomic.Bool // the filesystem cannot reserve: stop asking
}

// ahead makes sure the segment file f has space reserved up to end
// (append calls it only past s.reservedTo, a check that inlines),
// rounding up to a whole step. A failure is not an error: the write that
// follows allocates as it would have (and reports a full disk itself);
// ahead tries again a step later. A filesystem that cannot reserve at all
// turns reservation off for the directory.
func (r *reserver) ahead(s *segment, f vfs.File, end int64) {
	if !r.enabled() {
		return
	}
	sr, ok := f.(vfs.SpaceReserver)
	if !ok {
		r.off.Store(true)
		return
	}
	from := max(s.reservedTo, s.size)
	to := (end + r.step - 1) / r.step * r.step
	if err := sr.Reserve(from, to-from); errors.Is(err, errors.ErrUnsupported) {
		r.off.Store(true)
		return
	}
	s.reservedTo = to
}

// enabled reports whether reservations are made (or might be).
func (r *reserver) enabled() bool { return r.step > 0 && !r.off.Load() }

// giveBack releases the space reserved past s's end by truncating f to
// the segment's size, when the segment stops being written: it rolls, or
// its log closes. It runs whether or not this process reserved anything,
// so space a crash left reserved comes back too. A failure costs only
// space and is reported to the caller to log, not to fail on.
func (r *reserver) giveBack(s *segment, f vfs.File) error {
	s.reservedTo = 0
	if !r.enabled() {
		return nil
	}
	return f.Truncate(s.size)
}

// giveBackReserved gives back s's reserved space through h, logging a
// failure: it costs disk space, not data.
func (l *Log) giveBackReserved(s *segment, h *handle) {
	if err := l.d.reserve.giveBack(s, h.f); err != nil {
		l.d.logger.Warn("segment: could not give back reserved disk space", "path", s.logPath, "err", err)
	}
}
