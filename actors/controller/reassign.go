package controller

import (
	"cmp"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Partition reassignment (KIP-455), as Kafka 3.9's ZooKeeper-mode
// KafkaController does it (onPartitionReassignment). With RS the
// partition's replicas, ORS the original ones, TRS the target:
//
//   - U: the topic znode gets RS = TRS then the rest of ORS, adding =
//     TRS−ORS, removing = ORS−TRS (written before anything is sent: the
//     znode is the only place ORS survives a controller failover).
//     Replacing a reassignment stops and deletes the replicas the new one
//     no longer has.
//   - A (TRS not yet in the ISR): a new leader epoch, LeaderAndIsr to ORS
//     and (is_new) to the adding replicas, which start following; the
//     leader adds them to the ISR through AlterPartition as they catch
//     up, and each such change comes back here.
//   - B (TRS in the ISR): RS = TRS; a leader from TRS (the first live
//     in-sync one) if the current one is not in TRS or is down, else a
//     new leader epoch; the removing replicas leave the ISR one by one,
//     get StopReplica, then StopReplica delete=true; the topic znode gets
//     RS = TRS with no adding/removing; UpdateMetadata to every broker.
//
// A null target cancels: the partition goes back to ORS (a reassignment
// to ORS, so the adding replicas are stopped and deleted). The legacy
// /admin/reassign_partitions znode starts reassignments too: the
// controller reads it when it is created (and at failover), drops the
// entries it cannot start, removes each entry as its reassignment
// completes (or an API call replaces it), and deletes the znode once
// empty. Reassignments in progress are in the topic znodes, so a new
// controller resumes them in Start.
//
// Where this differs from Kafka: the LeaderAndIsr of phase A reaches the
// adding replicas once, with is_new (Kafka then moves them to
// NewReplica, which sends the same request again); entries of the legacy
// znode with an empty, duplicated or negative replica list are dropped as
// invalid (Kafka would start them, and an empty one would leave the
// partition without replicas).

// reassignments is the controller's view of reassignments under way.
type reassignments struct {
	// inProgress is Kafka's partitionsBeingReassigned.
	inProgress map[TopicPartition]bool
	// zk is /admin/reassign_partitions as this controller last read or
	// wrote it (zkExists false: no znode).
	zk       map[TopicPartition][]int32
	zkExists bool
	// pendingZk is the znode's content read before Start, processed by
	// Start (QueueZkReassignment).
	pendingZk map[TopicPartition][]int32
}

// ReassignZnode is a write of /admin/reassign_partitions: what is left of
// the legacy reassignments; empty deletes the znode.
type ReassignZnode struct {
	Partitions map[TopicPartition][]int32
}

// assignment is Kafka's ReplicaAssignment.
type assignment struct {
	replicas, adding, removing []int32
}

func (a assignment) beingReassigned() bool { return len(a.adding) > 0 || len(a.removing) > 0 }
func (a assignment) origin() []int32       { return without(a.replicas, a.adding) }
func (a assignment) target() []int32       { return without(a.replicas, a.removing) }

func (a assignment) equal(b assignment) bool {
	return slices.Equal(a.replicas, b.replicas) && slices.Equal(a.adding, b.adding) && slices.Equal(a.removing, b.removing)
}

// reassignTo is ReplicaAssignment.reassignTo: the target first, then the
// original replicas it leaves out.
func (a assignment) reassignTo(target []int32) assignment {
	var full []int32
	for _, r := range slices.Concat(target, a.origin()) {
		if !slices.Contains(full, r) {
			full = append(full, r)
		}
	}
	return assignment{replicas: full, adding: without(full, a.origin()), removing: without(full, target)}
}

func without(s, drop []int32) []int32 {
	var out []int32
	for _, r := range s {
		if !slices.Contains(drop, r) {
			out = append(out, r)
		}
	}
	return out
}

func (p *partition) assignment() assignment {
	return assignment{replicas: slices.Clone(p.replicas), adding: slices.Clone(p.adding), removing: slices.Clone(p.removing)}
}

func (p *partition) setAssignment(a assignment) {
	p.replicas, p.adding, p.removing = slices.Clone(a.replicas), slices.Clone(a.adding), slices.Clone(a.removing)
}

func newReassignments() reassignments {
	return reassignments{inProgress: map[TopicPartition]bool{}}
}

// QueueZkReassignment hands the core /admin/reassign_partitions as read
// before Start; Start processes it before resuming the reassignments in
// the topic znodes (Kafka's initializePartitionReassignments). It does
// nothing by itself.
func (c *Core) QueueZkReassignment(parts map[TopicPartition][]int32) {
	c.ra.pendingZk = maps.Clone(parts)
	if c.ra.pendingZk == nil {
		c.ra.pendingZk = map[TopicPartition][]int32{}
	}
}

// initReassignments is Start's part: the partitions whose topic znode
// says they are being reassigned are in progress; the legacy znode's
// reassignments start (and supplant those), the others resume.
func (c *Core) initReassignments() {
	pending := c.ra.pendingZk
	c.ra = newReassignments()
	for _, p := range c.allPartitions() {
		if p.assignment().beingReassigned() {
			c.ra.inProgress[p.tp] = true
		}
	}
	var fromZk map[TopicPartition]bool
	if pending != nil {
		fromZk = c.processZkReassignment(pending)
	}
	for _, tp := range c.inProgressSorted() {
		if p := c.parts[tp]; p != nil && !fromZk[tp] {
			c.onPartitionReassignment(p, p.assignment())
		}
	}
}

// ZkReassignment is /admin/reassign_partitions created (Kafka's
// processZkPartitionReassignment): parts is its content.
func (c *Core) ZkReassignment(parts map[TopicPartition][]int32) Effects {
	c.begin()
	c.processZkReassignment(parts)
	return c.end()
}

func (c *Core) processZkReassignment(parts map[TopicPartition][]int32) map[TopicPartition]bool {
	c.ra.zk, c.ra.zkExists = maps.Clone(parts), true
	started := map[TopicPartition]bool{}
	failed := map[TopicPartition]bool{}
	for _, tp := range sortedPartitionKeys(parts) {
		if code, _ := validTarget(parts[tp]); code != kerr.None {
			failed[tp] = true
			continue
		}
		a, _ := c.buildReassignment(tp, parts[tp])
		if code := c.triggerReassignment(tp, a); code != kerr.None {
			failed[tp] = true
		} else {
			started[tp] = true
		}
	}
	if len(failed) > 0 {
		c.removeFromZkReassignment(func(tp TopicPartition, _ []int32) bool { return failed[tp] })
	} else if len(parts) == 0 {
		c.removeFromZkReassignment(func(TopicPartition, []int32) bool { return true })
	}
	return started
}

// AlterPartitionReassignments is Kafka's processApiPartitionReassignment:
// each partition's target is checked (INVALID_REPLICA_ASSIGNMENT), a
// cancellation of nothing is NO_REASSIGNMENT_IN_PROGRESS, an unknown
// partition or one of a topic being deleted UNKNOWN_TOPIC_OR_PARTITION;
// the rest start, and supplant any legacy-znode reassignment of the same
// partitions. Effects.Reply is the answer; if the writes fail it is
// NOT_CONTROLLER (the client finds the controller and retries).
func (c *Core) AlterPartitionReassignments(req *kmsg.AlterPartitionAssignmentsRequest) Effects {
	c.begin()
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	type result struct {
		code kerr.Code
		msg  string
	}
	results := map[TopicPartition]result{}
	toStart := map[TopicPartition]assignment{}
	// A partition named twice takes its last target (Kafka builds a map).
	var order []TopicPartition
	targets := map[TopicPartition][]int32{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			tp := TopicPartition{rt.Topic, rp.Partition}
			if _, seen := targets[tp]; !seen {
				order = append(order, tp)
			}
			targets[tp] = rp.Replicas
		}
	}
	for _, tp := range order {
		target := targets[tp]
		if target != nil {
			if code, msg := c.validateReplicas(tp, target); code != kerr.None {
				results[tp] = result{code, msg}
				continue
			}
		}
		a, ok := c.buildReassignment(tp, target)
		if !ok {
			results[tp] = result{kerr.NoReassignmentInProgress, ""}
			continue
		}
		toStart[tp] = a
	}
	c.removeFromZkReassignment(func(tp TopicPartition, _ []int32) bool { _, ok := toStart[tp]; return ok })
	for _, tp := range sortedPartitionKeys(toStart) {
		code := c.triggerReassignment(tp, toStart[tp])
		msg := ""
		if code == kerr.UnknownTopicOrPartition {
			msg = "The partition does not exist."
		}
		results[tp] = result{code, msg}
	}
	byTopic := map[string]int{}
	for _, tp := range order {
		i, ok := byTopic[tp.Topic]
		if !ok {
			t := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			t.Topic = tp.Topic
			resp.Topics = append(resp.Topics, t)
			i = len(resp.Topics) - 1
			byTopic[tp.Topic] = i
		}
		r := results[tp]
		pr := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
		pr.Partition, pr.ErrorCode = tp.Partition, int16(r.code)
		if r.msg != "" {
			msg := r.msg
			pr.ErrorMessage = &msg
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, pr)
	}
	c.fx.Reply = resp
	c.reply = func(WriteError) Effects {
		failed := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		failed.ErrorCode = int16(kerr.NotController)
		return Effects{Reply: failed}
	}
	return c.end()
}

// ListPartitionReassignments is Kafka's processListPartitionReassignments:
// the named partitions (all in progress when none are named) that are
// being reassigned, with their replicas, adding and removing replicas.
func (c *Core) ListPartitionReassignments(req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	var tps []TopicPartition
	if req.Topics == nil {
		tps = c.inProgressSorted()
	} else {
		seen := map[TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, n := range t.Partitions {
				if tp := (TopicPartition{t.Topic, n}); !seen[tp] {
					seen[tp] = true
					tps = append(tps, tp)
				}
			}
		}
	}
	byTopic := map[string]int{}
	for _, tp := range tps {
		p := c.parts[tp]
		if p == nil || !p.assignment().beingReassigned() {
			continue
		}
		i, ok := byTopic[tp.Topic]
		if !ok {
			t := kmsg.NewListPartitionReassignmentsResponseTopic()
			t.Topic = tp.Topic
			resp.Topics = append(resp.Topics, t)
			i = len(resp.Topics) - 1
			byTopic[tp.Topic] = i
		}
		pr := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		pr.Partition = tp.Partition
		pr.Replicas, pr.AddingReplicas, pr.RemovingReplicas = nonNil(p.replicas), nonNil(p.adding), nonNil(p.removing)
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, pr)
	}
	return resp
}

// validTarget is the part of Kafka's validateReplicas that needs no
// cluster state, in its order: empty, duplicates, negative ids.
func validTarget(replicas []int32) (kerr.Code, string) {
	seen := map[int32]bool{}
	for _, r := range replicas {
		seen[r] = true
	}
	switch {
	case len(replicas) == 0:
		return kerr.InvalidReplicaAssignment, "Empty replica list specified in partition reassignment."
	case len(seen) != len(replicas):
		return kerr.InvalidReplicaAssignment, "Duplicate replica ids in partition reassignment replica list."
	case slices.ContainsFunc(replicas, func(r int32) bool { return r < 0 }):
		return kerr.InvalidReplicaAssignment, "Invalid broker id in replica list."
	}
	return kerr.None, ""
}

// validateReplicas is Kafka's: not empty, no duplicates, no negative ids,
// and every replica the reassignment adds on a registered broker.
func (c *Core) validateReplicas(tp TopicPartition, replicas []int32) (kerr.Code, string) {
	if code, msg := validTarget(replicas); code != kerr.None {
		return code, msg
	}
	var cur assignment
	if p := c.parts[tp]; p != nil {
		cur = p.assignment()
	}
	for _, r := range cur.reassignTo(replicas).adding {
		if !c.live(r) {
			return kerr.InvalidReplicaAssignment, "Replica assignment has brokers that are not alive."
		}
	}
	return kerr.None, ""
}

// buildReassignment is Kafka's maybeBuildReassignment: a nil target
// cancels the reassignment under way (back to the original replicas);
// cancelling nothing is not ok.
func (c *Core) buildReassignment(tp TopicPartition, target []int32) (assignment, bool) {
	var cur assignment
	if p := c.parts[tp]; p != nil {
		cur = p.assignment()
	}
	if cur.beingReassigned() {
		if target == nil {
			target = cur.origin()
		}
		return cur.reassignTo(target), true
	}
	if target == nil {
		return assignment{}, false
	}
	return cur.reassignTo(target), true
}

// triggerReassignment is maybeTriggerPartitionReassignment for one
// partition.
func (c *Core) triggerReassignment(tp TopicPartition, a assignment) kerr.Code {
	p := c.parts[tp]
	if p == nil || c.del.queued[tp.Topic] || len(p.replicas) == 0 {
		return kerr.UnknownTopicOrPartition
	}
	c.onPartitionReassignment(p, a)
	return kerr.None
}

// onPartitionReassignment is Kafka's, phases U, A and B above.
func (c *Core) onPartitionReassignment(p *partition, a assignment) {
	c.haltDeletionIfReassigning(p.tp.Topic, true)
	c.updateCurrentReassignment(p, a)
	if !c.reassignmentComplete(p) {
		// A1, A2: the new replicas learn they are (is_new) and follow.
		c.updateLeaderEpochAndSend(p)
		return
	}
	adding, removing := p.adding, p.removing
	// B1: the added replicas are online replicas.
	var added []replica
	for _, r := range adding {
		added = append(added, replica{p, r})
	}
	c.onlineReplicas(added)
	// B2, B3: RS = TRS, with a leader from it.
	p.setAssignment(assignment{replicas: p.assignment().target()})
	c.moveLeaderIfRequired(p)
	// B4, B5: the removed replicas leave the ISR, stop, and are deleted.
	c.stopRemovedReplicas(p, removing)
	// B6, B7.
	c.writeAssignment(p.tp.Topic)
	delete(c.ra.inProgress, p.tp)
	done := slices.Clone(p.replicas)
	c.removeFromZkReassignment(func(tp TopicPartition, rs []int32) bool { return tp == p.tp && slices.Equal(rs, done) })
	// B8.
	c.sendUpdateMetadata(c.liveIDs(), []*partition{p})
	c.resumeDeletionFor([]string{p.tp.Topic})
}

// updateCurrentReassignment: U1 to U3.
func (c *Core) updateCurrentReassignment(p *partition, a assignment) {
	cur := p.assignment()
	if !cur.equal(a) {
		p.setAssignment(a)
		c.writeAssignment(p.tp.Topic)
		if unneeded := without(cur.replicas, a.replicas); len(unneeded) > 0 {
			c.stopRemovedReplicas(p, unneeded)
		}
	}
	c.ra.inProgress[p.tp] = true
}

// reassignmentComplete is isReassignmentComplete: nothing to reassign, or
// every target replica in the ISR.
func (c *Core) reassignmentComplete(p *partition) bool {
	a := p.assignment()
	if !a.beingReassigned() {
		return true
	}
	if p.state == nil {
		return false
	}
	for _, r := range a.target() {
		if !slices.Contains(p.state.ISR, r) {
			return false
		}
	}
	return true
}

// updateLeaderEpochAndSend is updateLeaderEpochAndSendRequest: a new
// leader epoch, LeaderAndIsr to the original replicas and, with is_new,
// to the adding ones. A partition without a state, or written by a newer
// controller, is left alone (Kafka fails the step).
func (c *Core) updateLeaderEpochAndSend(p *partition) {
	if p.state == nil || c.writtenByNewer(p) {
		return
	}
	c.flush()
	s := p.state.clone()
	s.LeaderEpoch++
	c.write(p, s)
	a := p.assignment()
	c.addLeaderAndISR(a.origin(), p, false)
	c.addLeaderAndISR(a.adding, p, true)
	c.flush()
}

// moveLeaderIfRequired is moveReassignedPartitionLeaderIfRequired.
func (c *Core) moveLeaderIfRequired(p *partition) {
	if p.state == nil {
		return
	}
	if l := p.state.Leader; slices.Contains(p.replicas, l) && c.online(l) {
		c.updateLeaderEpochAndSend(p)
		return
	}
	c.toOnline([]*partition{p}, c.reassignElection)
}

// reassignElection is Election.leaderForReassign: the first target
// replica that is online and in the ISR leads; the ISR stays.
func (c *Core) reassignElection(p *partition) (*PartitionState, []int32) {
	for _, r := range p.replicas {
		if c.online(r) && slices.Contains(p.state.ISR, r) {
			s := p.state.clone()
			s.Leader = r
			s.LeaderEpoch++
			return &s, slices.Clone(p.replicas)
		}
	}
	return nil, nil
}

// stopRemovedReplicas is stopRemovedReplicasOfReassignedPartition:
// OfflineReplica (StopReplica, out of the ISR), then ReplicaDeletionStarted
// (StopReplica delete=true).
func (c *Core) stopRemovedReplicas(p *partition, brokers []int32) {
	for _, b := range brokers {
		if c.del.queued[p.tp.Topic] {
			// offlineReplicas leaves the ISRs of topics queued for
			// deletion alone; a removed replica must leave it anyway.
			c.shrinkOut(p, b)
		}
		c.offlineReplicas(b, []*partition{p})
	}
	for _, b := range brokers {
		c.addStopReplica(b, p, true)
	}
	c.flush()
}

// writeAssignment records the write of topic's znode from the cache
// (Kafka's setTopicAssignmentRaw, any version). A topic written twice in
// one call is written once, last.
func (c *Core) writeAssignment(topic string) {
	t := c.topics[topic]
	if t == nil {
		return
	}
	a := TopicAssignment{Name: t.name, ID: t.id, Partitions: map[int32][]int32{}, Adding: map[int32][]int32{}, Removing: map[int32][]int32{}, Version: -1}
	for _, p := range t.parts {
		a.Partitions[p.tp.Partition] = slices.Clone(p.replicas)
		if len(p.adding) > 0 {
			a.Adding[p.tp.Partition] = slices.Clone(p.adding)
		}
		if len(p.removing) > 0 {
			a.Removing[p.tp.Partition] = slices.Clone(p.removing)
		}
	}
	c.fx.Assignments = slices.DeleteFunc(c.fx.Assignments, func(x TopicAssignment) bool { return x.Name == topic })
	c.fx.Assignments = append(c.fx.Assignments, a)
}

// removeFromZkReassignment is maybeRemoveFromZkReassignment: the legacy
// znode loses the entries drop names; empty, it is deleted.
func (c *Core) removeFromZkReassignment(drop func(TopicPartition, []int32) bool) {
	if !c.ra.zkExists {
		return
	}
	n := len(c.ra.zk)
	maps.DeleteFunc(c.ra.zk, drop)
	if len(c.ra.zk) == n && n > 0 {
		return
	}
	c.fx.ReassignZnode = &ReassignZnode{Partitions: maps.Clone(c.ra.zk)}
	if len(c.ra.zk) == 0 {
		c.ra.zk, c.ra.zkExists = nil, false
	}
}

// maybeCompleteReassignments is what follows a successful AlterPartition:
// a reassigning partition whose ISR now holds its target completes.
func (c *Core) maybeCompleteReassignments(ps []*partition) {
	for _, p := range ps {
		if c.ra.inProgress[p.tp] && c.reassignmentComplete(p) {
			c.onPartitionReassignment(p, p.assignment())
		}
	}
}

// resumeReassignmentsOn is onBrokerStartup's maybeResumeReassignments:
// reassignments with a target replica on a broker that just started.
func (c *Core) resumeReassignmentsOn(ids []int32) {
	for _, tp := range c.inProgressSorted() {
		p := c.parts[tp]
		if p == nil {
			continue
		}
		if slices.ContainsFunc(p.assignment().target(), func(r int32) bool { return slices.Contains(ids, r) }) {
			c.onPartitionReassignment(p, p.assignment())
		}
	}
}

// haltDeletionIfReassigning is markTopicIneligibleForDeletion for a topic
// with a reassignment in progress (or starting one, force): its deletion
// waits for the reassignment to complete.
func (c *Core) haltDeletionIfReassigning(topic string, force bool) {
	if !c.del.queued[topic] || !c.cfg.DeleteTopicEnable {
		return
	}
	if force || slices.ContainsFunc(c.inProgressSorted(), func(tp TopicPartition) bool { return tp.Topic == topic }) {
		c.del.ineligible[topic] = true
	}
}

func (c *Core) inProgressSorted() []TopicPartition {
	return sortedPartitionKeys(c.ra.inProgress)
}

func sortedPartitionKeys[V any](m map[TopicPartition]V) []TopicPartition {
	out := slices.Collect(maps.Keys(m))
	slices.SortFunc(out, func(a, b TopicPartition) int {
		if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return out
}
