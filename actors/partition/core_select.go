package partition

import "slices"

// PreferredReadReplica is KIP-392's choice for a consumer in rack
// fetching from offset, as Kafka's RackAwareReplicaSelector makes it: the
// leader (-1: no redirect) when the client names no rack, when no
// candidate is in its rack, or when the leader itself is; otherwise the
// candidate in its rack with the highest fetch position, then the one
// caught up most recently, then the lowest id. Candidates are the
// followers in the ISR whose fetch position is at or past offset (one
// that has not fetched as far as the consumer would send it back), and
// whose rack rackOf knows (a broker the cluster view does not list has
// no endpoint to redirect to). Only a leader redirects.
func (c *Core) PreferredReadReplica(rack string, offset, nowMs int64, rackOf func(id int32) (string, bool)) int32 {
	if c.lead == nil || rack == "" {
		return -1
	}
	if r, ok := rackOf(c.lead.Me); ok && r == rack {
		return -1
	}
	best := int32(-1)
	var bestEnd, bestSince int64
	for _, id := range slices.Sorted(func(yield func(int32) bool) {
		for id := range c.lead.followers {
			if !yield(id) {
				return
			}
		}
	}) {
		f := c.lead.followers[id]
		if !slices.Contains(c.lead.ISR, id) || f.end < offset {
			continue
		}
		if r, ok := rackOf(id); !ok || r != rack {
			continue
		}
		since := nowMs - f.caughtUpMs
		if best < 0 || f.end > bestEnd || f.end == bestEnd && since < bestSince {
			best, bestEnd, bestSince = id, f.end, since
		}
	}
	return best
}
