package wiring

import (
	"errors"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors"
	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/controller"
	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/zkmeta"

	"github.com/samsa-io/samsa/actors/api"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
)

// controllerRequests routes the requests addressed to the controller
// (ControlledShutdown, AlterPartition, AllocateProducerIds) to this
// broker's controller actor once it runs; before, they are answered
// NOT_CONTROLLER, which makes the sender look the controller up again.
type controllerRequests struct {
	to atomic.Pointer[func(req *wire.Request)]
	// unclean tells the controller actor that unclean leader election was
	// turned on (for a topic, or "" for the broker), once it runs.
	unclean atomic.Pointer[func(topic string)]
}

// configsRead hears the dynamic configs the config watch reads: one that
// turns unclean.leader.election.enable on makes the controller try its
// leaderless partitions again (Kafka's TopicConfigHandler and
// DynamicBrokerConfig call enableTopicUncleanLeaderElection and
// enableDefaultUncleanLeaderElection). Only true matters: turning it off
// affects the next election, which reads the config anyway.
func (c *controllerRequests) configsRead(msg any) {
	var topic string
	var cfg map[string]string
	switch m := msg.(type) {
	case *catalog.TopicConfigsChanged:
		topic, cfg = m.Topic, m.Configs
	case *catalog.BrokerConfigsChanged:
		cfg = m.Configs
	default:
		return
	}
	if v, ok := cfg[config.KeyUncleanLeaderElection]; !ok || !config.ParseBool(v) {
		return
	}
	if f := c.unclean.Load(); f != nil {
		(*f)(topic)
	}
}

func newControllerRequests() *controllerRequests { return &controllerRequests{} }

func (c *controllerRequests) serve(req *wire.Request) {
	if f := c.to.Load(); f != nil {
		(*f)(req)
		return
	}
	env.Reply(req, api.NotController(req))
}

// brokerController is this broker's controller actor and what feeds it.
type brokerController struct {
	broker  *actors.Broker
	pid     *actor.PID
	channel *interbroker.Channel
	client  *interbroker.Client
	reqs    *controllerRequests
}

// startController spawns the controller actor: it campaigns at once, and
// while elected it is the cluster's controller.
func startController(cfg *config.Broker, logger *slog.Logger, zc *zkmeta.Client, reqs *controllerRequests, broker *actors.Broker, sec interbroker.Security) *brokerController {
	client := interbroker.New(interbroker.Config{ClientID: "samsa-controller-" + strconv.Itoa(int(cfg.BrokerID)), Log: logger, Security: sec})
	channel := interbroker.NewChannel(client, interbroker.ChannelConfig{Log: logger})
	props := controller.Props(controller.ShellConfig{
		Core: controller.Config{BrokerID: cfg.BrokerID, UncleanLeaderElection: config.ParseBool(cfg.Value(config.KeyUncleanLeaderElection)),
			UncleanFor:        uncleanFor(cfg, zc, logger),
			DeleteTopicEnable: cfg.DeleteTopicEnable, InterBrokerListener: cfg.Cluster.InterBrokerListener,
			AutoLeaderRebalance: cfg.Cluster.AutoLeaderRebalance, LeaderImbalanceCheckInterval: cfg.Cluster.LeaderImbalanceCheckInterval,
			LeaderImbalancePerBrokerPercentage: cfg.Cluster.LeaderImbalancePerBroker},
		Store: controllerStore{zc}, Sender: channel, Log: logger.With("component", "controller"), Classify: classifyZKError,
	})
	pid, err := broker.Spawn(props, "controller")
	if err != nil {
		logger.Error("cannot start the controller actor; this broker never becomes controller", "err", err)
		channel.Close()
		client.Close()
		return nil
	}
	bc := &brokerController{broker: broker, pid: pid, channel: channel, client: client, reqs: reqs}
	forward := func(req *wire.Request) {
		reply := func(resp kmsg.Response) { env.Reply(req, resp) }
		switch body := req.Body.(type) {
		case *kmsg.AlterPartitionRequest:
			broker.Send(pid, &controller.AlterPartition{Req: body, Reply: reply})
		case *kmsg.ControlledShutdownRequest:
			broker.Send(pid, &controller.ControlledShutdown{Req: body, Reply: reply})
		case *kmsg.ElectLeadersRequest:
			broker.Send(pid, &controller.ElectLeaders{Req: body, Reply: reply})
		case *kmsg.AllocateProducerIDsRequest:
			broker.Send(pid, &controller.AllocateProducerIDs{Req: body, Reply: reply})
		case *kmsg.AlterPartitionAssignmentsRequest:
			broker.Send(pid, &controller.AlterPartitionReassignments{Req: body, Reply: reply})
		case *kmsg.ListPartitionReassignmentsRequest:
			broker.Send(pid, &controller.ListPartitionReassignments{Req: body, Reply: reply})
		default:
			env.Reply(req, api.NotController(req))
		}
	}
	reqs.to.Store(&forward)
	unclean := func(topic string) { broker.Send(pid, &controller.UncleanEnabled{Topic: topic}) }
	reqs.unclean.Store(&unclean)
	return bc
}

// uncleanFor is unclean.leader.election.enable for one topic as Kafka's
// controller reads it at an election: the topic's config in ZooKeeper,
// else the broker's dynamic config (its own, then the cluster default),
// else the static one. A read error falls back to the static value: the
// election must not stall on it, and clean is the safe side only when
// the static value says so.
func uncleanFor(cfg *config.Broker, zc *zkmeta.Client, logger *slog.Logger) func(topic string) bool {
	static := config.ParseBool(cfg.Value(config.KeyUncleanLeaderElection))
	id := strconv.Itoa(int(cfg.BrokerID))
	return func(topic string) bool {
		for _, e := range [][2]string{{"topics", topic}, {"brokers", id}, {"brokers", "<default>"}} {
			m, err := zc.EntityConfig(e[0], e[1])
			if err != nil {
				logger.Warn("controller: cannot read unclean.leader.election.enable", "entity", e[0]+"/"+e[1], "err", err)
				return static
			}
			if v, ok := m[config.KeyUncleanLeaderElection]; ok {
				return config.ParseBool(v)
			}
		}
		return static
	}
}

// session tells the controller of the ZooKeeper session's fate.
func (bc *brokerController) session(ev zkmeta.SessionEvent) {
	switch ev {
	case zkmeta.Expired:
		bc.broker.Send(bc.pid, &controller.SessionExpired{})
	case zkmeta.NewSession:
		bc.broker.Send(bc.pid, &controller.SessionRestored{})
	}
}

// Stop stops the actor (it resigns if it is the controller) and its
// links.
func (bc *brokerController) Stop() {
	bc.reqs.to.Store(nil)
	bc.reqs.unclean.Store(nil)
	bc.broker.Stop(bc.pid)
	bc.channel.Close()
	bc.client.Close()
}

func classifyZKError(err error) controller.WriteError {
	switch {
	case errors.Is(err, zkmeta.ErrControllerMoved):
		return controller.WriteFenced
	case errors.Is(err, zkmeta.ErrBadVersion), errors.Is(err, zkmeta.ErrNodeExists), errors.Is(err, zkmeta.ErrNoNode):
		return controller.WriteConflict
	}
	return controller.WriteOther
}

// controllerStore is the controller's Store over zkmeta: the same calls,
// the controller's own types.
type controllerStore struct{ c *zkmeta.Client }

func (s controllerStore) ElectController(id int32, now time.Time) (bool, int32, int32, error) {
	return s.c.ElectController(id, now)
}

func (s controllerStore) ResignController(v int32) error { return s.c.ResignController(v) }

func (s controllerStore) WatchController() (int32, bool, <-chan struct{}, error) {
	ctl, ok, ch, err := s.c.WatchController()
	return ctl.BrokerID, ok, ch, err
}

func (s controllerStore) Brokers() (map[int32]controller.BrokerInfo, error) {
	bs, err := s.c.Brokers()
	if err != nil {
		return nil, err
	}
	out := make(map[int32]controller.BrokerInfo, len(bs))
	for id, b := range bs {
		info := controller.BrokerInfo{ID: b.ID, Rack: b.Rack, Epoch: b.Epoch}
		for _, e := range b.Endpoints {
			info.Endpoints = append(info.Endpoints, controller.Endpoint{Listener: e.Listener, Host: e.Host, Port: e.Port, SecurityProtocol: e.SecurityProtocol})
		}
		out[id] = info
	}
	return out, nil
}

func (s controllerStore) WatchBrokerIDs() ([]int32, <-chan struct{}, error) {
	return s.c.WatchBrokerIDs()
}
func (s controllerStore) WatchTopics() ([]string, <-chan struct{}, error) { return s.c.WatchTopics() }
func (s controllerStore) WatchDeleteTopics() ([]string, <-chan struct{}, error) {
	return s.c.WatchDeleteTopics()
}

func (s controllerStore) WatchAssignment(topic string) (controller.TopicAssignment, <-chan struct{}, error) {
	a, ch, err := s.c.WatchAssignment(topic)
	return controller.TopicAssignment{Name: a.Name, ID: controller.TopicID(a.ID), Partitions: a.Partitions, Adding: a.Adding,
		Removing: a.Removing, Version: a.Version}, ch, err
}

func (s controllerStore) PartitionStates(topic string) (map[int32]controller.PartitionState, error) {
	ps, err := s.c.PartitionStates(topic)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]controller.PartitionState, len(ps))
	for p, st := range ps {
		out[p] = controller.PartitionState{Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, ControllerEpoch: st.ControllerEpoch,
			ISR: st.ISR, LeaderRecoveryState: st.LeaderRecoveryState, Version: st.Version}
	}
	return out, nil
}

func (s controllerStore) WritePartitionStates(v int32, ws []controller.StateWrite) ([]int32, error) {
	return s.c.WritePartitionStates(v, zkStateWrites(ws))
}

func zkStateWrites(ws []controller.StateWrite) []zkmeta.StateWrite {
	zw := make([]zkmeta.StateWrite, len(ws))
	for i, w := range ws {
		st := w.State
		zw[i] = zkmeta.StateWrite{TP: zkmeta.TopicPartition{Topic: w.TP.Topic, Partition: w.TP.Partition}, Create: w.Create,
			State: zkmeta.PartitionState{Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, ControllerEpoch: st.ControllerEpoch,
				ISR: st.ISR, LeaderRecoveryState: st.LeaderRecoveryState, Version: st.Version}}
	}
	return zw
}

func (s controllerStore) DeleteTopic(v int32, topic string) error { return s.c.DeleteTopic(v, topic) }
func (s controllerStore) RemoveDeletionMarker(v int32, topic string) error {
	return s.c.RemoveDeletionMarker(v, topic)
}

func (s controllerStore) AllocateProducerIDBlock(broker int32, size int64) (controller.ProducerIDBlock, error) {
	b, err := s.c.AllocateProducerIDBlock(broker, size)
	return controller.ProducerIDBlock{Broker: b.Broker, Start: b.Start, End: b.End}, err
}

func (s controllerStore) EnsureFeatures() error {
	_, err := s.c.EnsureFeatures()
	return err
}

func (s controllerStore) WriteStatesAndAssignments(v int32, ws []controller.StateWrite, as []controller.TopicAssignment) ([]int32, error) {
	za := make([]zkmeta.TopicAssignment, len(as))
	for i, a := range as {
		za[i] = zkmeta.TopicAssignment{Name: a.Name, ID: zkmeta.TopicID(a.ID), Partitions: a.Partitions, Adding: a.Adding, Removing: a.Removing, Version: a.Version}
	}
	return s.c.WriteStatesAndAssignments(v, zkStateWrites(ws), za)
}

func (s controllerStore) WatchReassignPartitions() (map[controller.TopicPartition][]int32, int64, bool, <-chan struct{}, error) {
	parts, czxid, ok, ch, err := s.c.WatchReassignPartitions()
	out := make(map[controller.TopicPartition][]int32, len(parts))
	for tp, rs := range parts {
		out[controller.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}] = rs
	}
	return out, czxid, ok, ch, err
}

func (s controllerStore) SetReassignPartitions(v int32, parts map[controller.TopicPartition][]int32) error {
	zp := make(map[zkmeta.TopicPartition][]int32, len(parts))
	for tp, rs := range parts {
		zp[zkmeta.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}] = rs
	}
	return s.c.SetReassignPartitions(v, zp)
}
