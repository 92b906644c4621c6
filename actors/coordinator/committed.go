package coordinator

import "time"

// Committed is one group's committed offset of one partition.
type Committed struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
}

// listCommitted asks a coordinator actor for every committed offset of
// its groups; it answers on Reply (buffered by the sender, so the actor
// never blocks), nothing while it loads.
type listCommitted struct{ Reply chan<- []Committed }

// committed lists the committed offsets of the actor's groups.
func (a *groupCoordinatorActor) committed() []Committed {
	if a.loading || a.core == nil {
		return nil
	}
	var out []Committed
	for _, id := range a.core.GroupIDs() {
		g := a.core.Group(id)
		if g == nil {
			continue
		}
		for _, f := range g.FetchOffsets(nil, false) {
			out = append(out, Committed{Group: id, Topic: f.Topic, Partition: f.Partition, Offset: f.Offset})
		}
	}
	return out
}

// Committed lists the committed offsets of every group coordinated on
// this broker (the metrics' consumer group lag), waiting at most wait for
// the coordinators' answers: a coordinator that is loading or slower
// than that is left out. Called from outside the actors (a metrics
// scrape); it never blocks an actor.
func (c *Coordinators) Committed(wait time.Duration) []Committed {
	pids := c.PIDs()
	if len(pids) == 0 {
		return nil
	}
	answers := make(chan []Committed, len(pids))
	for _, pid := range pids {
		if pid != nil {
			c.env.Send(pid, &listCommitted{Reply: answers})
		}
	}
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	var out []Committed
	for _, pid := range pids {
		if pid == nil {
			continue
		}
		select {
		case got := <-answers:
			out = append(out, got...)
		case <-timeout.C:
			return out
		}
	}
	return out
}
