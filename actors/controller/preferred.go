package controller

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Replica leader elections asked for by an admin (ElectLeaders, Kafka's
// processReplicaLeaderElection with AdminClientTriggered) or by the
// controller itself (auto.leader.rebalance.enable, Kafka's
// checkAndTriggerAutoLeaderRebalance).

// Election types of ElectLeaders (Kafka's ElectionType).
const (
	ElectPreferred int8 = 0
	ElectUnclean   int8 = 1
)

// ElectLeaders is the ElectLeaders API (43). Per partition, as Kafka 3.9:
// UNKNOWN_TOPIC_OR_PARTITION for a partition the controller does not
// know, INVALID_TOPIC_EXCEPTION for a topic queued for deletion,
// ELECTION_NOT_NEEDED when the preferred replica already leads
// (preferred) or the leader is live (unclean), then the election itself:
// PREFERRED_LEADER_NOT_AVAILABLE when the preferred replica is not live
// or not in the ISR, ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica at
// all can lead (unclean). A null topic list means every partition, and
// then the ELECTION_NOT_NEEDED answers are left out, as Kafka does.
//
// The answer (Effects.Reply) goes once the writes succeed; Kafka's broker
// also waits (up to the request's timeout) until its own metadata shows
// the new leaders, which this controller's requests bring right after.
func (c *Core) ElectLeaders(req *kmsg.ElectLeadersRequest) Effects {
	c.begin()
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	if req.ElectionType != ElectPreferred && req.ElectionType != ElectUnclean {
		// Kafka's ElectionType.valueOf throws, and the request fails as a
		// whole with UNKNOWN_SERVER_ERROR on every partition.
		resp.ErrorCode = int16(kerr.UnknownServerError)
		for _, rt := range req.Topics {
			for _, n := range rt.Partitions {
				addElectResult(resp, rt.Topic, n, kerr.UnknownServerError, nil)
			}
		}
		c.fx.Reply = resp
		return c.end()
	}
	unclean := req.ElectionType == ElectUnclean
	all := req.Topics == nil
	var tps []TopicPartition
	if all {
		// Kafka's broker lists its metadata cache: partitions with a
		// state, not queued for deletion (brokers drop those).
		for _, p := range c.partitionsWithLeaders() {
			tps = append(tps, p.tp)
		}
	} else {
		seen := map[TopicPartition]bool{}
		for _, rt := range req.Topics {
			for _, n := range rt.Partitions {
				tp := TopicPartition{rt.Topic, n}
				if !seen[tp] {
					seen[tp] = true
					tps = append(tps, tp)
				}
			}
		}
	}
	type result struct {
		code kerr.Code
		msg  string
	}
	results := make([]result, len(tps))
	var elected []int // indexes of tps whose election wrote
	for i, tp := range tps {
		p := c.parts[tp]
		switch {
		case p == nil:
			results[i] = result{kerr.UnknownTopicOrPartition, "The partition does not exist."}
		case c.del.queued[tp.Topic]:
			results[i] = result{kerr.InvalidTopicException, "The topic is being deleted"}
		case !c.electionNeeded(p, unclean):
			results[i] = result{kerr.ElectionNotNeeded, "Leader election not needed for topic partition."}
		case c.electAdmin(p, unclean):
			elected = append(elected, i)
		case unclean:
			results[i] = result{kerr.EligibleLeadersNotAvailable, "Failed to elect leader for partition " + tp.String() + " under strategy OfflinePartitionLeaderElectionStrategy(true)"}
		default:
			results[i] = result{kerr.PreferredLeaderNotAvailable, "Failed to elect leader for partition " + tp.String() + " under strategy PreferredReplicaPartitionLeaderElectionStrategy"}
		}
	}
	c.flush()
	for i, tp := range tps {
		r := results[i]
		if all && r.code == kerr.ElectionNotNeeded {
			continue
		}
		var msg *string
		if r.msg != "" {
			msg = &r.msg
		}
		addElectResult(resp, tp.Topic, tp.Partition, r.code, msg)
	}
	c.fx.Reply = resp
	if len(elected) > 0 {
		// The elections were answered as done; if the write fails they
		// were not (Kafka answers the exception the write threw).
		c.reply = func(why WriteError) Effects {
			code := kerr.UnknownServerError
			if why == WriteFenced {
				code = kerr.NotController
			}
			failed := map[TopicPartition]bool{}
			for _, i := range elected {
				failed[tps[i]] = true
			}
			for ti := range resp.Topics {
				rt := &resp.Topics[ti]
				for pi := range rt.Partitions {
					pr := &rt.Partitions[pi]
					if failed[TopicPartition{rt.Topic, pr.Partition}] {
						pr.ErrorCode, pr.ErrorMessage = int16(code), nil
					}
				}
			}
			return Effects{Reply: resp}
		}
	}
	return c.end()
}

// addElectResult appends one partition's answer, grouping by topic.
func addElectResult(resp *kmsg.ElectLeadersResponse, topic string, partition int32, code kerr.Code, msg *string) {
	i := slices.IndexFunc(resp.Topics, func(r kmsg.ElectLeadersResponseTopic) bool { return r.Topic == topic })
	if i < 0 {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = topic
		resp.Topics = append(resp.Topics, rt)
		i = len(resp.Topics) - 1
	}
	pr := kmsg.NewElectLeadersResponseTopicPartition()
	pr.Partition, pr.ErrorCode, pr.ErrorMessage = partition, int16(code), msg
	resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, pr)
}

// electionNeeded is Kafka's split of the asked partitions into electable
// ones and those that already have a valid leader: preferred, the leader
// is not the first replica; unclean, there is no live leader (a broker
// shutting down no longer counts as live).
func (c *Core) electionNeeded(p *partition, unclean bool) bool {
	if p.state == nil {
		return true // no state yet: the election fails below
	}
	if unclean {
		return p.state.Leader == NoLeader || !c.online(p.state.Leader)
	}
	return p.state.Leader != p.replicas[0]
}

// electAdmin runs one admin election (Kafka's handleStateChanges to
// OnlinePartition with the preferred strategy, or the offline one with
// unclean allowed) and reports whether it wrote a new leader.
func (c *Core) electAdmin(p *partition, unclean bool) bool {
	if p.state == nil || c.writtenByNewer(p) {
		return false
	}
	var s *PartitionState
	var recipients []int32
	if unclean {
		s, recipients = c.electOffline(p, true)
	} else {
		s, recipients = c.preferredElection(p)
	}
	if s == nil {
		return false
	}
	c.write(p, *s)
	c.addLeaderAndISR(recipients, p, false)
	p.phase = phaseOnline
	return true
}

// preferredElection is Election.leaderForPreferredReplica: the first
// replica leads if it is live and in the ISR; the ISR stays.
func (c *Core) preferredElection(p *partition) (*PartitionState, []int32) {
	if !c.canPreferredLead(p) {
		return nil, nil
	}
	s := p.state.clone()
	s.Leader = p.replicas[0]
	s.LeaderEpoch++
	return &s, c.liveReplicas(p)
}

func (c *Core) canPreferredLead(p *partition) bool {
	if len(p.replicas) == 0 || p.state == nil {
		return false
	}
	pref := p.replicas[0]
	return c.online(pref) && slices.Contains(p.state.ISR, pref)
}

// CheckLeaderBalance is the periodic check of auto.leader.rebalance.enable
// (Kafka's checkAndTriggerAutoLeaderRebalance; the shell's timer calls it
// every leader.imbalance.check.interval.seconds). Partitions are grouped
// by their preferred replica; a broker whose share of partitions led by
// someone else is above leader.imbalance.per.broker.percentage gets those
// partitions back, where it is live and in their ISR. Topics queued for
// deletion are left out.
func (c *Core) CheckLeaderBalance() Effects {
	c.begin()
	byPreferred := map[int32][]*partition{}
	for _, p := range c.allPartitions() {
		if len(p.replicas) == 0 || c.del.queued[p.tp.Topic] {
			continue
		}
		byPreferred[p.replicas[0]] = append(byPreferred[p.replicas[0]], p)
	}
	for _, b := range sortedKeys(byPreferred) {
		ps := byPreferred[b]
		var away []*partition
		for _, p := range ps {
			if p.state != nil && p.state.Leader != b {
				away = append(away, p)
			}
		}
		// Kafka compares the ratio as a double with the percentage / 100.
		if float64(len(away))/float64(len(ps)) <= float64(c.cfg.LeaderImbalancePerBrokerPercentage)/100 {
			continue
		}
		for _, p := range away {
			if c.canPreferredLead(p) {
				c.electAdmin(p, false)
			}
		}
		c.flush()
	}
	return c.end()
}

// uncleanAllowed is unclean.leader.election.enable for topic: Kafka reads
// the topic's config at each election that needs it (only partitions with
// no live in-sync replica do).
func (c *Core) uncleanAllowed(topic string) bool {
	if c.cfg.UncleanFor != nil {
		return c.cfg.UncleanFor(topic)
	}
	return c.cfg.UncleanLeaderElection
}

// ElectLeadersNotController is the answer of a broker that is not the
// controller, as Kafka's: every asked partition NOT_CONTROLLER, the
// request's error NONE. A null topic list (every partition) cannot be
// listed without the controller's view, so from v1 on that answer
// carries NOT_CONTROLLER as its error instead of claiming nothing needed
// an election.
func ElectLeadersNotController(req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	if req.Topics == nil {
		resp.ErrorCode = int16(kerr.NotController)
		return resp
	}
	for _, rt := range req.Topics {
		for _, n := range rt.Partitions {
			addElectResult(resp, rt.Topic, n, kerr.NotController, nil)
		}
	}
	return resp
}

// UncleanEnabled is unclean.leader.election.enable turned on, for topic
// or ("") the broker's default (Kafka's processTopicUncleanLeaderElection
// Enable and processUncleanLeaderElectionEnable): the partitions still
// without a leader try again, looking the config up anew.
func (c *Core) UncleanEnabled(topic string) Effects {
	c.begin()
	var ps []*partition
	for _, p := range c.allPartitions() {
		if (topic == "" || p.tp.Topic == topic) && (p.phase == phaseNew || p.phase == phaseOffline) && !c.del.queued[p.tp.Topic] {
			ps = append(ps, p)
		}
	}
	c.toOnline(ps, c.offlineElection)
	return c.end()
}
