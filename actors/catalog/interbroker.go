package catalog

import (
	"slices"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The controller's requests to this broker (cluster mode). Each is
// decided by the pure half (actors/cluster) and carried out here; the
// answer goes out once it is in force, so the controller's next step
// (and a client it then points here) finds the partitions ready.

// InterBrokerRequest is a controller request the metadata actor serves:
// UpdateMetadata, LeaderAndIsr, StopReplica.
type InterBrokerRequest struct{ Req *wire.Request }

// leaderAndIsrConfigs carries a LeaderAndIsr back to the actor with the
// configs, read from ZooKeeper, of the topics it is to create here.
type leaderAndIsrConfigs struct {
	req     *wire.Request
	body    *kmsg.LeaderAndISRRequest
	configs map[string]map[string]string
	offsets int32 // __consumer_offsets' partition count, when the request names it
	txns    int32 // __transaction_state's, likewise
}

func (a *metadataActor) serveInterBroker(req *wire.Request) {
	if a.cl == nil {
		// A single broker has no controller: the request was meant for
		// a cluster this broker is not in.
		a.env.Log.Warn("a controller request reached a broker that runs alone; refused", "api", wire.APIName(req.Header.APIKey), "client", req.ClientAddr)
		env.Reply(req, refusal(req, kerr.StaleControllerEpoch))
		return
	}
	switch body := req.Body.(type) {
	case *kmsg.UpdateMetadataRequest:
		a.updateMetadata(req, body)
	case *kmsg.LeaderAndISRRequest:
		a.fetchNewTopicConfigs(req, body)
	case *kmsg.StopReplicaRequest:
		a.stopReplicas(req, body)
	default:
		req.Reply(nil)
	}
}

// refusal is an inter-broker response carrying only a top-level code.
func refusal(req *wire.Request, code kerr.Code) kmsg.Response {
	resp := req.Body.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.UpdateMetadataResponse:
		r.ErrorCode = code.Int16()
	case *kmsg.LeaderAndISRResponse:
		r.ErrorCode = code.Int16()
	case *kmsg.StopReplicaResponse:
		r.ErrorCode = code.Int16()
	}
	return resp
}

func (a *metadataActor) brokerState() cluster.BrokerState {
	return cluster.BrokerState{ID: a.env.BrokerID(), Epoch: a.cfg.Cluster.BrokerEpoch.Load(), ControllerEpoch: a.cl.ctrlEpoch,
		Local: func(topic string, p int32) (cluster.Replica, bool) {
			id, epoch, ok := a.state.Held(topic, p)
			if !a.cl.roled[partKey{id, p}] {
				epoch = -1
			}
			return cluster.Replica{ID: id, LeaderEpoch: epoch}, ok
		}}
}

func (a *metadataActor) updateMetadata(req *wire.Request, body *kmsg.UpdateMetadataRequest) {
	resp := body.ResponseKind().(*kmsg.UpdateMetadataResponse)
	if body.Version >= 5 && body.BrokerEpoch != -1 && body.BrokerEpoch < a.cfg.Cluster.BrokerEpoch.Load() {
		resp.ErrorCode = kerr.StaleBrokerEpoch.Int16()
		env.Reply(req, resp)
		return
	}
	next, code := a.cl.view.Apply(body)
	resp.ErrorCode = code.Int16()
	if code == kerr.None {
		a.cl.view, a.cl.ctrlEpoch = next, max(a.cl.ctrlEpoch, body.ControllerEpoch)
		a.cfg.Cluster.View.Publish(next)
		a.publish()
		a.wake()
	}
	env.Reply(req, resp)
}

// fetchNewTopicConfigs reads, off the actor, the ZooKeeper configs of the
// topics a LeaderAndIsr creates here, so their logs open configured.
func (a *metadataActor) fetchNewTopicConfigs(req *wire.Request, body *kmsg.LeaderAndISRRequest) {
	var fresh []string
	for _, ts := range body.TopicStates {
		if _, ok := a.state.Topic(ts.Topic); !ok {
			fresh = append(fresh, ts.Topic)
		}
	}
	for _, ps := range body.PartitionStates {
		if _, ok := a.state.Topic(ps.Topic); !ok {
			fresh = append(fresh, ps.Topic)
		}
	}
	names := func(topic string) bool {
		for _, ts := range body.TopicStates {
			if ts.Topic == topic {
				return true
			}
		}
		for _, ps := range body.PartitionStates {
			if ps.Topic == topic {
				return true
			}
		}
		return false
	}
	offsets, txns := names(offsetsTopic), names(txnTopic)
	self, root, store, log := a.ctx.Self(), a.env.System.Root, a.cfg.Cluster.Store, a.env.Log
	go func() {
		count := func(named bool, topic string) int32 {
			if !named {
				return 0
			}
			n, err := store.PartitionCount(topic)
			if err != nil {
				log.Warn("cannot read the partition count of an internal topic; its coordinators wait for the next LeaderAndIsr", "topic", topic, "err", err)
			}
			return n
		}
		n, nt := count(offsets, offsetsTopic), count(txns, txnTopic)
		configs := make(map[string]map[string]string, len(fresh))
		for _, t := range fresh {
			c, err := store.TopicConfig(t)
			if err != nil {
				log.Warn("cannot read a new topic's configs from ZooKeeper; its logs open with the defaults until the next config change", "topic", t, "err", err)
				continue
			}
			configs[t] = c
		}
		root.Send(self, &leaderAndIsrConfigs{req: req, body: body, configs: configs, offsets: n, txns: nt})
	}()
}

// leaderAndIsr makes this broker leader or follower of the partitions a
// LeaderAndIsr names: new replicas are recorded and their logs opened in
// the role they are given, held ones change role; the answer goes out
// once every role is in force.
func (a *metadataActor) leaderAndIsr(m *leaderAndIsrConfigs) {
	roles, resp := cluster.LeaderAndIsr(m.body, a.brokerState())
	if resp.ErrorCode == 0 {
		a.cl.ctrlEpoch = max(a.cl.ctrlEpoch, m.body.ControllerEpoch)
	}
	if len(roles) == 0 {
		env.Reply(m.req, resp)
		return
	}
	me := a.env.BrokerID()
	replicas := make([]metadata.Replica, len(roles))
	byKey := make(map[partKey]cluster.Role, len(roles))
	for i, r := range roles {
		replicas[i] = metadata.Replica{Topic: r.Topic, ID: r.ID, Partition: r.Partition, LeaderEpoch: r.LeaderEpoch}
	}
	eff, err := a.state.Host(replicas, m.configs, a.now())
	if err != nil {
		a.env.Log.Error("cannot record the replicas the controller gave this broker", "err", err)
		setAll(resp, kerr.KafkaStorageError)
		env.Reply(m.req, resp)
		return
	}
	if a.cl.roled == nil {
		a.cl.roled = map[partKey]bool{}
	}
	for _, r := range roles {
		id, _, _ := a.state.Held(r.Topic, r.Partition)
		byKey[partKey{id, r.Partition}] = r
		a.cl.roled[partKey{id, r.Partition}] = true
	}
	for i := range eff.Start {
		// A new replica opens as a follower whatever its role: the
		// SetRole below makes a leader of it with its ISR, so no write
		// is acknowledged before the leader knows whom to wait for.
		s := &eff.Start[i]
		s.LeaderEpoch, s.Follower = byKey[partKey{s.ID, s.Partition}].LeaderEpoch, true
	}
	// The answer waits for both: the new logs open (apply) and every
	// partition in its role (the new ones get theirs right after they
	// open: the message queues behind their start).
	phases := new(atomic.Int32)
	phases.Store(2)
	answer := func() {
		if phases.Add(-1) != 0 {
			return
		}
		counts := map[string]int32{offsetsTopic: m.offsets, txnTopic: m.txns}
		for _, r := range roles {
			if hook := a.roleHook(r.Topic); hook != nil && counts[r.Topic] > 0 {
				hook(r.Partition, counts[r.Topic], r.Leads(me), r.LeaderEpoch)
			}
		}
		env.Reply(m.req, resp)
	}
	leaders := 0
	for _, r := range roles {
		if r.Leads(me) {
			leaders++
		}
	}
	a.env.Log.Info("the controller set this broker's roles", "partitions", len(roles), "leading", leaders, "new", len(eff.Start),
		"controller", m.body.ControllerID, "controller_epoch", m.body.ControllerEpoch)
	a.apply(eff, answer)
	log := a.env.Log
	roled := gather.New(len(roles), a.env.GatherTimeout, func(_ []int64, timedOut bool) {
		if timedOut {
			log.Warn("partitions took long to take the roles the controller gave them; answering anyway")
		}
		answer()
	})
	for i, r := range roles {
		id, _, _ := a.state.Held(r.Topic, r.Partition)
		pid := a.parts[partKey{id, r.Partition}]
		slot := gather.Slot{G: roled, I: i}
		if pid == nil {
			slot.Put(0)
			continue
		}
		a.ctx.Send(pid, &partition.SetRole{LeaderEpoch: r.LeaderEpoch, Follower: !r.Leads(me), Replicas: r.Replicas, ISR: r.ISR,
			PartitionEpoch: r.ZkVersion, Done: func() { slot.Put(0) }})
		if f := a.cfg.Followers; f != nil {
			if r.Leads(me) {
				f.Unfollow(r.Topic, r.Partition)
			} else if r.Leader >= 0 {
				f.Follow(FollowedPartition{Topic: r.Topic, ID: id, Partition: r.Partition, Leader: r.Leader, LeaderEpoch: r.LeaderEpoch, PID: pid,
					InSync: slices.Contains(r.ISR, me)})
			} else {
				f.Unfollow(r.Topic, r.Partition)
			}
		}
	}
}

func setAll(resp *kmsg.LeaderAndISRResponse, code kerr.Code) {
	for i := range resp.Partitions {
		resp.Partitions[i].ErrorCode = code.Int16()
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			resp.Topics[i].Partitions[j].ErrorCode = code.Int16()
		}
	}
}

// stopReplicas carries out a StopReplica: replicas to delete leave this
// broker with their files; the others stop serving (followers without a
// leader) until a LeaderAndIsr gives them a role again.
func (a *metadataActor) stopReplicas(req *wire.Request, body *kmsg.StopReplicaRequest) {
	stops, resp := cluster.StopReplica(body, a.brokerState())
	if resp.ErrorCode == 0 {
		a.cl.ctrlEpoch = max(a.cl.ctrlEpoch, body.ControllerEpoch)
	}
	byTopic := make(map[string][]int32)
	var eff metadata.Effects
	for _, s := range stops {
		id, epoch, ok := a.state.Held(s.Topic, s.Partition)
		if !ok {
			continue
		}
		if s.Delete {
			byTopic[s.Topic] = append(byTopic[s.Topic], s.Partition)
			if f := a.cfg.Followers; f != nil {
				f.Unfollow(s.Topic, s.Partition)
			}
			continue
		}
		if pid := a.parts[partKey{id, s.Partition}]; pid != nil {
			a.ctx.Send(pid, &partition.SetRole{LeaderEpoch: epoch, Follower: true})
		}
		if f := a.cfg.Followers; f != nil {
			f.Unfollow(s.Topic, s.Partition)
		}
	}
	for _, s := range stops {
		if hook := a.roleHook(s.Topic); hook != nil {
			hook(s.Partition, 0, false, s.LeaderEpoch)
		}
	}
	for topic, parts := range byTopic {
		e, err := a.state.Unhost(topic, parts)
		if err != nil {
			a.env.Log.Error("cannot record the deletion of replicas; they stay until the controller asks again", "topic", topic, "err", err)
			for i := range resp.Partitions {
				if resp.Partitions[i].Topic == topic {
					resp.Partitions[i].ErrorCode = kerr.KafkaStorageError.Int16()
				}
			}
			continue
		}
		eff.Delete = append(eff.Delete, e.Delete...)
	}
	if len(byTopic) > 0 {
		a.env.Log.Info("the controller removed replicas from this broker", "topics", len(byTopic), "partitions", len(eff.Delete))
	}
	a.apply(eff, func() { env.Reply(req, resp) })
}

// offsetsTopic is the group coordinators' topic (actors/coordinator's
// OffsetsTopic; catalog cannot import coordinator).
const offsetsTopic = "__consumer_offsets"

// roleHook is the hook that hears this broker's roles for an internal
// topic's partitions (its coordinators follow leadership), nil for
// other topics.
func (a *metadataActor) roleHook(topic string) func(partition, n int32, leading bool, epoch int32) {
	switch topic {
	case offsetsTopic:
		return a.cfg.OnOffsetsRole
	case txnTopic:
		return a.cfg.OnTxnRole
	}
	return nil
}

// txnTopic is the transaction coordinators' topic (actors/txn's
// TransactionTopic).
const txnTopic = "__transaction_state"
