package sharegroup

import "time"

// RecordState is the state of one in-flight record of a share partition
// (KIP-932): delivered records move between these until they are
// acknowledged or archived, after which they leave the in-flight set.
type RecordState int8

const (
	Available    RecordState = 0
	Acquired     RecordState = 1
	Acknowledged RecordState = 2
	Archived     RecordState = 4
)

// AckType is an acknowledgement's kind as ShareFetch/ShareAcknowledge
// carry it.
type AckType int8

const (
	AckGap     AckType = 0 // the offset holds no record (compaction, a control batch)
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
)

// inFlight is one record between the share-partition start and end
// offsets that is not yet acknowledged or archived, or is but sits above
// a record that is not (the start offset moves only over finished ones).
type inFlight struct {
	state      RecordState
	deliveries int16
	owner      string    // the member holding the acquisition lock
	deadline   time.Time // when the lock expires
}

// Limits are a share partition's settings: how long an acquisition lock
// lasts (group.share.record.lock.duration.ms) and how many times a record
// is delivered before it is archived (group.share.delivery.count.limit).
type Limits struct {
	LockDuration  time.Duration
	DeliveryLimit int16
	// MaxInFlight bounds end-start (group.share.partition.max.record.locks
	// in spirit): acquisition stops there until the start moves.
	MaxInFlight int64
}

// DefaultLimits are Kafka's defaults.
var DefaultLimits = Limits{LockDuration: 30 * time.Second, DeliveryLimit: 5, MaxInFlight: 2000}

// Partition is the pure core of one share partition of one share group:
// the share-partition start offset (SPSO: every offset below is finished),
// the end offset (SPEO: no offset at or above was ever delivered) and the
// in-flight records between. It has no clock of its own; every call
// takes now.
type Partition struct {
	limits   Limits
	start    int64
	end      int64
	inflight map[int64]*inFlight
}

// NewPartition starts a share partition at offset start (from
// share.auto.offset.reset, or the durable state).
func NewPartition(start int64, limits Limits) *Partition {
	return &Partition{limits: limits, start: start, end: start, inflight: map[int64]*inFlight{}}
}

// SetLimits changes the partition's settings (its group's configs
// changed): locks taken from now on last the new duration, and the new
// delivery limit applies to the next release or expiry.
func (p *Partition) SetLimits(l Limits) { p.limits = l }

// Start is the share-partition start offset.
func (p *Partition) Start() int64 { return p.start }

// End is the share-partition end offset.
func (p *Partition) End() int64 { return p.end }

// State reports an offset's state and delivery count; offsets below start
// are Acknowledged or Archived (reported Acknowledged), offsets at or
// above end are Available with no delivery.
func (p *Partition) State(offset int64) (RecordState, int16) {
	switch {
	case offset < p.start:
		return Acknowledged, 0
	case offset >= p.end:
		return Available, 0
	}
	r := p.inflight[offset]
	if r == nil {
		return Available, 0
	}
	return r.state, r.deliveries
}

// Expire ends every acquisition lock whose deadline has passed: the record
// is available again, or archived if it used its last delivery.
func (p *Partition) Expire(now time.Time) {
	for _, r := range p.inflight {
		if r.state == Acquired && !now.Before(r.deadline) {
			p.unlock(r)
		}
	}
	p.advance()
}

// unlock gives an acquired record up: available, or archived when it has
// been delivered as often as allowed.
func (p *Partition) unlock(r *inFlight) {
	r.owner, r.deadline = "", time.Time{}
	if r.deliveries >= p.limits.DeliveryLimit {
		r.state = Archived
		return
	}
	r.state = Available
}

// NextAvailable is the lowest offset at or above start that could be
// acquired now (after expiring locks): where a fetch should read from.
func (p *Partition) NextAvailable(now time.Time) int64 {
	p.Expire(now)
	for o := p.start; o < p.end; o++ {
		if r := p.inflight[o]; r == nil || r.state == Available {
			return o
		}
	}
	return p.end
}

// AcquiredRun is a run of offsets acquired together with the same delivery
// count, as ShareFetch's AcquiredRecords lists them.
type AcquiredRun struct {
	First, Last int64
	Deliveries  int16
}

// Acquire locks for member up to max available offsets within
// [first, last] (offsets the fetch read whole batches for) and returns
// them in runs. Offsets above end join the in-flight set; the end moves
// past them.
func (p *Partition) Acquire(member string, first, last int64, max int, now time.Time) []AcquiredRun {
	return p.acquire(member, first, last, max, now, true)
}

// AcquireRest locks for member every available offset within [first,
// last], the rest of a batch an Acquire stopped inside: the fetch's
// record count and the in-flight limit bound where an acquisition starts
// and roughly how far it goes, but it ends on a batch boundary, as
// Kafka's does (a batch is sent whole, so handing out only part of it
// would send the rest again with every later fetch).
func (p *Partition) AcquireRest(member string, first, last int64, now time.Time) []AcquiredRun {
	return p.acquire(member, first, last, int(last-first+1), now, false)
}

func (p *Partition) acquire(member string, first, last int64, max int, now time.Time, capped bool) []AcquiredRun {
	p.Expire(now)
	if first < p.start {
		first = p.start
	}
	var out []AcquiredRun
	n := 0
	for o := first; o <= last && n < max; o++ {
		if o >= p.end {
			if capped && p.limits.MaxInFlight > 0 && o-p.start >= p.limits.MaxInFlight {
				break
			}
			if o > p.end {
				// A hole between end and the read (never happens when the
				// read starts at NextAvailable); keep the invariant that
				// every offset in [start, end) is tracked or available.
				break
			}
			p.inflight[o] = &inFlight{}
			p.end = o + 1
		}
		r := p.inflight[o]
		if r == nil {
			r = &inFlight{}
			p.inflight[o] = r
		}
		if r.state != Available {
			continue
		}
		r.state, r.owner, r.deadline = Acquired, member, now.Add(p.limits.LockDuration)
		r.deliveries++
		n++
		if k := len(out) - 1; k >= 0 && out[k].Last == o-1 && out[k].Deliveries == r.deliveries {
			out[k].Last = o
		} else {
			out = append(out, AcquiredRun{First: o, Last: o, Deliveries: r.deliveries})
		}
	}
	return out
}

// Acknowledge applies member's acknowledgement of [first, last]: types
// has one entry for the whole range or one per offset. Every offset must
// be acquired by member under a live lock, or nothing is applied and ok
// is false (INVALID_RECORD_STATE).
func (p *Partition) Acknowledge(member string, first, last int64, types []AckType, now time.Time) bool {
	if last < first || len(types) == 0 || (len(types) != 1 && int64(len(types)) != last-first+1) {
		return false
	}
	p.Expire(now)
	typeOf := func(o int64) AckType {
		if len(types) == 1 {
			return types[0]
		}
		return types[o-first]
	}
	for o := first; o <= last; o++ {
		r := p.inflight[o]
		if o < p.start || o >= p.end || r == nil || r.state != Acquired || r.owner != member {
			return false
		}
		if t := typeOf(o); t < AckGap || t > AckReject {
			return false
		}
	}
	for o := first; o <= last; o++ {
		r := p.inflight[o]
		switch typeOf(o) {
		case AckAccept:
			r.state, r.owner, r.deadline = Acknowledged, "", time.Time{}
		case AckRelease:
			p.unlock(r)
		case AckReject, AckGap:
			r.state, r.owner, r.deadline = Archived, "", time.Time{}
		}
	}
	p.advance()
	return true
}

// ReleaseMember gives up every lock member holds (it left the group or
// closed its share session), as a release would.
func (p *Partition) ReleaseMember(member string) {
	for _, r := range p.inflight {
		if r.state == Acquired && r.owner == member {
			p.unlock(r)
		}
	}
	p.advance()
}

// advance moves the start over finished records and forgets them.
func (p *Partition) advance() {
	for p.start < p.end {
		r := p.inflight[p.start]
		if r == nil || (r.state != Acknowledged && r.state != Archived) {
			return
		}
		delete(p.inflight, p.start)
		p.start++
	}
}

// Reset moves the start to offset when the log no longer holds records
// below it (retention, DeleteRecords): those records are gone.
func (p *Partition) Reset(logStart int64) {
	if logStart <= p.start {
		return
	}
	for o := range p.inflight {
		if o < logStart {
			delete(p.inflight, o)
		}
	}
	p.start = logStart
	if p.end < logStart {
		p.end = logStart
	}
	p.advance()
}

// Lag is how many records below hw are not yet acknowledged or archived
// (DescribeShareGroupOffsets v1's lag).
func (p *Partition) Lag(hw int64) int64 {
	if hw <= p.start {
		return 0
	}
	lag := hw - p.start
	for o, r := range p.inflight {
		if o < hw && (r.state == Acknowledged || r.state == Archived) {
			lag--
		}
	}
	return lag
}

// NextLockExpiry is the earliest deadline of a live acquisition lock:
// when records may next come back available by expiry.
func (p *Partition) NextLockExpiry() (time.Time, bool) {
	var first time.Time
	for _, r := range p.inflight {
		if r.state == Acquired && (first.IsZero() || r.deadline.Before(first)) {
			first = r.deadline
		}
	}
	return first, !first.IsZero()
}
