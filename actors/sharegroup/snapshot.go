package sharegroup

import "sort"

// StateBatch is a run of in-flight offsets with one state and delivery
// count, as Kafka's ShareSnapshot records keep them.
type StateBatch struct {
	First, Last int64
	State       RecordState
	Deliveries  int16
}

// Snapshot is what a share partition must keep across a restart: the
// start offset and the finished or delivered records above it. Acquired
// records are kept as available (their locks die with the broker) with
// their delivery counts, as Kafka does.
type Snapshot struct {
	Start   int64
	Batches []StateBatch
}

// Snapshot returns the partition's durable state.
func (p *Partition) Snapshot() Snapshot {
	offsets := make([]int64, 0, len(p.inflight))
	for o := range p.inflight {
		offsets = append(offsets, o)
	}
	sort.Slice(offsets, func(i, j int) bool { return offsets[i] < offsets[j] })
	s := Snapshot{Start: p.start}
	for _, o := range offsets {
		r := p.inflight[o]
		st := r.state
		if st == Acquired {
			// The lock dies with the broker: the record is available
			// again, or archived if that was its last delivery.
			st = Available
			if r.deliveries >= p.limits.DeliveryLimit {
				st = Archived
			}
		}
		if k := len(s.Batches) - 1; k >= 0 && s.Batches[k].Last == o-1 && s.Batches[k].State == st && s.Batches[k].Deliveries == r.deliveries {
			s.Batches[k].Last = o
			continue
		}
		s.Batches = append(s.Batches, StateBatch{First: o, Last: o, State: st, Deliveries: r.deliveries})
	}
	return s
}

// RestorePartition rebuilds a share partition from its snapshot.
func RestorePartition(s Snapshot, limits Limits) *Partition {
	p := NewPartition(s.Start, limits)
	for _, b := range s.Batches {
		for o := b.First; o <= b.Last; o++ {
			if o < p.start {
				continue
			}
			p.inflight[o] = &inFlight{state: b.State, deliveries: b.Deliveries}
			if o >= p.end {
				p.end = o + 1
			}
		}
	}
	// Offsets between tracked ones that the snapshot does not list were
	// never delivered: available with no delivery.
	for o := p.start; o < p.end; o++ {
		if p.inflight[o] == nil {
			p.inflight[o] = &inFlight{}
		}
	}
	p.advance()
	return p
}
