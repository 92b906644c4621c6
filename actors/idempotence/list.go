package idempotence

import "sort"

// Listed is one producer of State.List: its id and a copy of its state.
type Listed struct {
	ID int64
	Producer
}

// LastSequence is the last sequence the producer wrote, or -1 when it
// has no batch on record (only markers, or batches without sequences), as
// Kafka's ProducerStateEntry reports it.
func (p Producer) LastSequence() int32 {
	if len(p.Batches) == 0 {
		return -1
	}
	return p.Batches[len(p.Batches)-1].LastSeq
}

// List returns every producer remembered, by id, for admin requests
// (DescribeProducers): copies, so the caller may keep them while the
// state moves on.
func (s *State) List() []Listed {
	out := make([]Listed, 0, len(s.producers))
	for id, p := range s.producers {
		c := *p
		c.Batches = append([]BatchRecord(nil), p.Batches...)
		out = append(out, Listed{ID: id, Producer: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
