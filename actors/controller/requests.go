package controller

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The request versions Kafka 3.9 sends at its default inter-broker
// protocol version (ControllerChannelManager: IBP >= 3.4-IV0).
const (
	leaderAndISRVersion   = 7
	updateMetadataVersion = 8
	stopReplicaVersion    = 4
)

// batch is Kafka's ControllerBrokerRequestBatch: the requests one state
// change produces, collected per broker and sent together (LeaderAndIsr,
// then UpdateMetadata, then StopReplica) when the change is done. Each
// entry is a snapshot of the state when it was added, as in Kafka.
type batch struct {
	lai      map[int32][]laiEntry
	umTo     map[int32]bool
	umParts  []TopicPartition
	umStates map[TopicPartition]kmsg.UpdateMetadataRequestTopicPartition
	stop     map[int32][]stopEntry
}

type laiEntry struct {
	tp       TopicPartition
	state    PartitionState
	replicas []int32
	isNew    bool
	// adding and removing: the reassignment under way, if any.
	adding, removing []int32
}

type stopEntry struct {
	tp          TopicPartition
	leaderEpoch int32
	delete      bool
}

func (b *batch) nonEmpty() bool {
	return len(b.lai) > 0 || len(b.umTo) > 0 || len(b.stop) > 0
}

// addLeaderAndISR is addLeaderAndIsrRequestForBrokers: p's current state
// to each of brokers, and UpdateMetadata for p to every live broker.
func (c *Core) addLeaderAndISR(brokers []int32, p *partition, isNew bool) {
	if c.req.lai == nil {
		c.req.lai = map[int32][]laiEntry{}
	}
	for _, b := range brokers {
		if b < 0 {
			continue
		}
		e := laiEntry{tp: p.tp, state: p.state.clone(), replicas: slices.Clone(p.replicas), isNew: isNew,
			adding: slices.Clone(p.adding), removing: slices.Clone(p.removing)}
		list := c.req.lai[b]
		if i := slices.IndexFunc(list, func(x laiEntry) bool { return x.tp == p.tp }); i >= 0 {
			e.isNew = e.isNew || list[i].isNew
			list[i] = e
		} else {
			list = append(list, e)
		}
		c.req.lai[b] = list
	}
	c.addUpdateMetadata(c.liveIDs(), []*partition{p})
}

// addUpdateMetadata asks for UpdateMetadata to brokers carrying parts'
// states (partitions without a state are skipped, as in Kafka).
func (c *Core) addUpdateMetadata(brokers []int32, parts []*partition) {
	if c.req.umTo == nil {
		c.req.umTo = map[int32]bool{}
		c.req.umStates = map[TopicPartition]kmsg.UpdateMetadataRequestTopicPartition{}
	}
	for _, b := range brokers {
		c.req.umTo[b] = true
	}
	for _, p := range parts {
		if p.state == nil {
			continue
		}
		s := *p.state
		if c.del.queued[p.tp.Topic] {
			// LeaderAndIsr.duringDelete: brokers drop the partition from
			// their metadata when its leader is -2.
			s = PartitionState{Leader: LeaderDuringDelete, ISR: s.ISR, ControllerEpoch: s.ControllerEpoch}
		}
		var offline []int32
		for _, r := range p.replicas {
			if !c.online(r) {
				offline = append(offline, r)
			}
		}
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Topic = p.tp.Topic
		ps.Partition = p.tp.Partition
		ps.ControllerEpoch = s.ControllerEpoch
		ps.Leader = s.Leader
		ps.LeaderEpoch = s.LeaderEpoch
		ps.ISR = nonNil(s.ISR)
		ps.ZKVersion = s.Version
		ps.Replicas = nonNil(p.replicas)
		ps.OfflineReplicas = nonNil(offline)
		if _, ok := c.req.umStates[p.tp]; !ok {
			c.req.umParts = append(c.req.umParts, p.tp)
		}
		c.req.umStates[p.tp] = ps
	}
}

func (c *Core) addStopReplica(b int32, p *partition, del bool) {
	if c.req.stop == nil {
		c.req.stop = map[int32][]stopEntry{}
	}
	epoch := NoLeader // Kafka's NoEpoch
	if c.del.queued[p.tp.Topic] {
		epoch = -2 // EpochDuringDelete overrides the partition's epoch
	} else if p.state != nil {
		epoch = p.state.LeaderEpoch
	}
	e := stopEntry{tp: p.tp, leaderEpoch: epoch, delete: del}
	list := c.req.stop[b]
	if i := slices.IndexFunc(list, func(x stopEntry) bool { return x.tp == p.tp }); i >= 0 {
		e.delete = e.delete || list[i].delete
		list[i] = e
	} else {
		list = append(list, e)
	}
	c.req.stop[b] = list
}

// sendUpdateMetadata is a batch of its own with just UpdateMetadata.
func (c *Core) sendUpdateMetadata(brokers []int32, parts []*partition) {
	c.flush()
	c.addUpdateMetadata(brokers, parts)
	c.flush()
}

// flush turns the collected requests into Sends, to live brokers only
// (Kafka's sendRequestsToBrokers), in broker order.
func (c *Core) flush() {
	b := c.req
	c.req = batch{}
	for _, id := range sortedKeys(b.lai) {
		if c.live(id) {
			c.fx.Send = append(c.fx.Send, Send{id, c.leaderAndISR(id, b.lai[id])})
		}
	}
	if len(b.umTo) > 0 {
		um := c.updateMetadataBody(b)
		for _, id := range sortedKeys(b.umTo) {
			if c.live(id) {
				req := *um
				req.BrokerEpoch = c.brokers[id].Epoch
				c.fx.Send = append(c.fx.Send, Send{id, &req})
			}
		}
	}
	for _, id := range sortedKeys(b.stop) {
		if c.live(id) {
			c.fx.Send = append(c.fx.Send, Send{id, c.stopReplica(id, b.stop[id])})
		}
	}
}

func (c *Core) leaderAndISR(to int32, entries []laiEntry) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = leaderAndISRVersion
	req.ControllerID = c.cfg.BrokerID
	req.ControllerEpoch = c.cfg.Epoch
	req.BrokerEpoch = c.brokers[to].Epoch
	req.Type = 0 // AbstractControlRequest.Type.UNKNOWN: a ZooKeeper controller never sets it
	leaders := map[int32]bool{}
	byTopic := map[string]int{}
	for _, e := range entries {
		leaders[e.state.Leader] = true
		i, ok := byTopic[e.tp.Topic]
		if !ok {
			ts := kmsg.NewLeaderAndISRRequestTopicState()
			ts.Topic = e.tp.Topic
			if t := c.topics[e.tp.Topic]; t != nil {
				ts.TopicID = t.id
			}
			req.TopicStates = append(req.TopicStates, ts)
			i = len(req.TopicStates) - 1
			byTopic[e.tp.Topic] = i
		}
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Topic = e.tp.Topic
		ps.Partition = e.tp.Partition
		ps.ControllerEpoch = e.state.ControllerEpoch
		ps.Leader = e.state.Leader
		ps.LeaderEpoch = e.state.LeaderEpoch
		ps.ISR = nonNil(e.state.ISR)
		ps.ZKVersion = e.state.Version
		ps.Replicas = nonNil(e.replicas)
		ps.AddingReplicas = nonNil(e.adding)
		ps.RemovingReplicas = nonNil(e.removing)
		ps.IsNew = e.isNew
		ps.LeaderRecoveryState = e.state.LeaderRecoveryState
		req.TopicStates[i].PartitionStates = append(req.TopicStates[i].PartitionStates, ps)
	}
	for _, id := range c.liveIDs() {
		if !leaders[id] {
			continue
		}
		ep := c.interBrokerEndpoint(c.brokers[id])
		ll := kmsg.NewLeaderAndISRRequestLiveLeader()
		ll.BrokerID = id
		ll.Host = ep.Host
		ll.Port = ep.Port
		req.LiveLeaders = append(req.LiveLeaders, ll)
	}
	return req
}

func (c *Core) interBrokerEndpoint(b BrokerInfo) Endpoint {
	for _, ep := range b.Endpoints {
		if ep.Listener == c.cfg.InterBrokerListener {
			return ep
		}
	}
	if len(b.Endpoints) > 0 {
		return b.Endpoints[0]
	}
	return Endpoint{}
}

func (c *Core) updateMetadataBody(b batch) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = updateMetadataVersion
	req.ControllerID = c.cfg.BrokerID
	req.ControllerEpoch = c.cfg.Epoch
	byTopic := map[string]int{}
	for _, tp := range b.umParts {
		i, ok := byTopic[tp.Topic]
		if !ok {
			ts := kmsg.NewUpdateMetadataRequestTopicState()
			ts.Topic = tp.Topic
			if t := c.topics[tp.Topic]; t != nil {
				ts.TopicID = t.id
			}
			req.TopicStates = append(req.TopicStates, ts)
			i = len(req.TopicStates) - 1
			byTopic[tp.Topic] = i
		}
		req.TopicStates[i].PartitionStates = append(req.TopicStates[i].PartitionStates, b.umStates[tp])
	}
	req.LiveBrokers = []kmsg.UpdateMetadataRequestLiveBroker{}
	for _, id := range c.liveIDs() {
		info := c.brokers[id]
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = id
		lb.Endpoints = []kmsg.UpdateMetadataRequestLiveBrokerEndpoint{}
		for _, ep := range info.Endpoints {
			e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			e.Host = ep.Host
			e.Port = ep.Port
			e.ListenerName = ep.Listener
			e.SecurityProtocol = securityProtocolID(ep.SecurityProtocol)
			lb.Endpoints = append(lb.Endpoints, e)
		}
		if info.Rack != "" {
			rack := info.Rack
			lb.Rack = &rack
		}
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	return req
}

func (c *Core) stopReplica(to int32, entries []stopEntry) *kmsg.StopReplicaRequest {
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = stopReplicaVersion
	req.ControllerID = c.cfg.BrokerID
	req.ControllerEpoch = c.cfg.Epoch
	req.BrokerEpoch = c.brokers[to].Epoch
	byTopic := map[string]int{}
	for _, e := range entries {
		i, ok := byTopic[e.tp.Topic]
		if !ok {
			t := kmsg.NewStopReplicaRequestTopic()
			t.Topic = e.tp.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[e.tp.Topic] = i
		}
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition = e.tp.Partition
		ps.LeaderEpoch = e.leaderEpoch
		ps.Delete = e.delete
		req.Topics[i].PartitionStates = append(req.Topics[i].PartitionStates, ps)
	}
	return req
}

// securityProtocolID is Kafka's SecurityProtocol id, as UpdateMetadata
// carries it.
func securityProtocolID(name string) int16 {
	switch name {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	}
	return 0 // PLAINTEXT
}

// nonNil keeps arrays encoded as empty rather than null, as Kafka's
// generated code always writes them.
func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return slices.Clone(s)
}
