package controller

import (
	"errors"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// ShellConfig is the controller actor's setup.
type ShellConfig struct {
	Core   Config // BrokerID and the cluster settings; the epochs come from each election
	Store  Store
	Sender Sender
	Log    *slog.Logger
	Now    func() time.Time
	// RetryAfter is how long to wait before campaigning again after a
	// ZooKeeper error (default 1s).
	RetryAfter time.Duration
	// Classify sorts a Store write error (default: errors.Is against
	// ErrControllerMoved, ErrConflict, ErrNoNode).
	Classify func(error) WriteError
	// OnControllerChange, if set, hears the controller's id (-1: none)
	// every time /controller is read.
	OnControllerChange func(id int32)
}

// producerIDBlockSize is Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE.
const producerIDBlockSize = 1000

// Props returns the props of the controller actor: it campaigns as soon
// as it starts.
func Props(cfg ShellConfig) *actor.Props {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Second
	}
	if cfg.Classify == nil {
		cfg.Classify = defaultClassify
	}
	return actor.PropsFromProducer(func() actor.Actor { return &shell{cfg: cfg} })
}

// shell is the controller actor: it campaigns, and while it is the
// controller it feeds the core what ZooKeeper and the brokers say and
// carries out the core's effects. Every field belongs to the actor's
// goroutine.
type shell struct {
	cfg  ShellConfig
	self *actor.PID
	sys  *actor.ActorSystem

	gen     uint64 // the term: bumped at every election won and step-down
	core    *Core  // nil unless controller
	brokers map[int32]BrokerInfo
	assign  map[string]TopicAssignment
	retry   *time.Timer
	balance *time.Timer // the next leader balance check, while controller
	// reassignCzxid is the creation of /admin/reassign_partitions last
	// handed to the core (0: none): the controller's own rewrites of the
	// znode fire its watch too, and are not a new request.
	reassignCzxid int64
}

func (a *shell) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.sys = ctx.Self(), ctx.ActorSystem()
		a.campaign()
	case *actor.Stopping:
		if a.core != nil {
			_ = a.cfg.Store.ResignController(a.core.cfg.EpochZkVersion)
		}
		a.stepDown("stopping")
		if a.retry != nil {
			a.retry.Stop()
		}
	case *controllerChanged:
		if m.gen == a.gen || a.core == nil {
			a.campaign()
		}
	case *retryCampaign:
		a.retry = nil
		if a.core == nil {
			a.campaign()
		}
	case *SessionExpired:
		a.stepDown("zookeeper session expired")
	case *SessionRestored:
		a.campaign()
	case *brokersChanged:
		if a.active(m.gen) {
			a.onBrokers()
		}
	case *topicsChanged:
		if a.active(m.gen) {
			a.onTopics()
		}
	case *assignmentChanged:
		if a.active(m.gen) {
			a.onAssignment(m.topic)
		}
	case *deletionsChanged:
		if a.active(m.gen) {
			a.onDeletions()
		}
	case *stopReplicaAnswer:
		if a.active(m.gen) {
			a.execute(a.core.StopReplicaAnswered(m.broker, m.req, m.resp))
		}
	case *AlterPartition:
		if a.core == nil {
			resp := m.Req.ResponseKind().(*kmsg.AlterPartitionResponse)
			resp.ErrorCode = int16(kerr.NotController)
			m.Reply(resp)
			return
		}
		a.executeReply(a.core.AlterPartition(m.Req), m.Reply)
	case *ControlledShutdown:
		if a.core == nil {
			resp := m.Req.ResponseKind().(*kmsg.ControlledShutdownResponse)
			resp.ErrorCode = int16(kerr.NotController)
			m.Reply(resp)
			return
		}
		a.executeReply(a.core.ControlledShutdown(m.Req), m.Reply)
	case *ElectLeaders:
		if a.core == nil {
			m.Reply(ElectLeadersNotController(m.Req))
			return
		}
		a.executeReply(a.core.ElectLeaders(m.Req), m.Reply)
	case *UncleanEnabled:
		if a.core != nil {
			a.execute(a.core.UncleanEnabled(m.Topic))
		}
	case *balanceCheck:
		if a.active(m.gen) {
			a.balance = nil
			a.execute(a.core.CheckLeaderBalance())
			a.scheduleBalance(a.cfg.Core.LeaderImbalanceCheckInterval)
		}
	case *AllocateProducerIDs:
		m.Reply(a.allocateProducerIDs(m.Req))
	case *AlterPartitionReassignments:
		if a.core == nil {
			resp := m.Req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
			resp.ErrorCode = int16(kerr.NotController)
			m.Reply(resp)
			return
		}
		a.executeReply(a.core.AlterPartitionReassignments(m.Req), m.Reply)
	case *ListPartitionReassignments:
		if a.core == nil {
			resp := m.Req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
			resp.ErrorCode = int16(kerr.NotController)
			m.Reply(resp)
			return
		}
		m.Reply(a.core.ListPartitionReassignments(m.Req))
	case *reassignZnodeChanged:
		if a.active(m.gen) {
			a.onReassignZnode()
		}
	}
}

func (a *shell) active(gen uint64) bool { return a.core != nil && gen == a.gen }

// watch sends msg to the actor when ch closes (a one-shot ZooKeeper
// watch firing, or the session going).
func (a *shell) watch(ch <-chan struct{}, msg any) {
	if ch == nil {
		return
	}
	pid, root := a.self, a.sys.Root
	go func() {
		<-ch
		root.Send(pid, msg)
	}()
}

// campaign is Kafka's elect(): read /controller (arming its watch); if
// nobody holds it, try to take it. Someone else's controller (or our own
// from an older session, still in ZooKeeper until it expires) is waited
// out through the watch.
func (a *shell) campaign() {
	id, exists, ch, err := a.cfg.Store.WatchController()
	if err != nil {
		a.fail("read /controller", err)
		return
	}
	a.watch(ch, &controllerChanged{gen: a.gen})
	if a.cfg.OnControllerChange != nil {
		if exists {
			a.cfg.OnControllerChange(id)
		} else {
			a.cfg.OnControllerChange(-1)
		}
	}
	if a.core != nil {
		if !exists || id != a.cfg.Core.BrokerID {
			a.stepDown("/controller is no longer ours")
		} else {
			return // still ours
		}
	}
	if exists {
		return
	}
	won, epoch, zkv, err := a.cfg.Store.ElectController(a.cfg.Core.BrokerID, a.cfg.Now())
	if err != nil {
		a.fail("elect", err)
		return
	}
	if !won {
		return // the watch tells us who won
	}
	a.gen++
	cfg := a.cfg.Core
	cfg.Epoch, cfg.EpochZkVersion = epoch, zkv
	a.core = New(cfg)
	a.cfg.Log.Info("controller: elected", "broker", cfg.BrokerID, "epoch", epoch)
	if a.cfg.OnControllerChange != nil {
		a.cfg.OnControllerChange(cfg.BrokerID)
	}
	// The /controller watch armed above belongs to the old term; arm one
	// for this term so that losing /controller is noticed.
	if _, _, ch, err := a.cfg.Store.WatchController(); err == nil {
		a.watch(ch, &controllerChanged{gen: a.gen})
	}
	a.load()
	if a.core != nil && cfg.AutoLeaderRebalance {
		// Kafka's onControllerFailover schedules the first check 5 s on;
		// a shorter interval (tests) starts sooner.
		a.scheduleBalance(min(firstBalanceCheck, cfg.LeaderImbalanceCheckInterval))
	}
}

// firstBalanceCheck is how long after an election the first leader
// balance check runs.
const firstBalanceCheck = 5 * time.Second

// scheduleBalance arms the next leader balance check for this term.
func (a *shell) scheduleBalance(after time.Duration) {
	if a.balance != nil {
		a.balance.Stop()
	}
	if after <= 0 {
		after = 300 * time.Second // leader.imbalance.check.interval.seconds' default
	}
	pid, root, gen := a.self, a.sys.Root, a.gen
	a.balance = time.AfterFunc(after, func() { root.Send(pid, &balanceCheck{gen}) })
}

// load reads everything (arming the watches first, as Kafka registers
// its handlers before reading) and starts the core.
func (a *shell) load() {
	st := a.cfg.Store
	gen := a.gen
	// Kafka's onControllerFailover sets up feature versioning first.
	if err := st.EnsureFeatures(); err != nil {
		a.resign("ensure /feature", err)
		return
	}
	_, ch, err := st.WatchBrokerIDs()
	if err != nil {
		a.resign("watch /brokers/ids", err)
		return
	}
	a.watch(ch, &brokersChanged{gen})
	names, ch, err := st.WatchTopics()
	if err != nil {
		a.resign("watch /brokers/topics", err)
		return
	}
	a.watch(ch, &topicsChanged{gen})
	deleting, ch, err := st.WatchDeleteTopics()
	if err != nil {
		a.resign("watch /admin/delete_topics", err)
		return
	}
	a.watch(ch, &deletionsChanged{gen})
	if !a.watchReassignZnode(true) {
		return
	}
	brokers, err := st.Brokers()
	if err != nil {
		a.resign("read brokers", err)
		return
	}
	a.assign = map[string]TopicAssignment{}
	states := map[TopicPartition]PartitionState{}
	for _, name := range names {
		if !a.readAssignment(name) {
			return
		}
		ps, err := st.PartitionStates(name)
		if err != nil {
			a.resign("read partition states", err)
			return
		}
		for p, s := range ps {
			states[TopicPartition{name, p}] = s
		}
	}
	a.setBrokers(brokers)
	a.execute(a.core.Start(brokers, a.assignments(), states, deleting))
}

func (a *shell) readAssignment(name string) bool {
	as, ch, err := a.cfg.Store.WatchAssignment(name)
	if errors.Is(err, ErrNoNode) {
		delete(a.assign, name) // deleted meanwhile: the topics watch will say so
		return true
	}
	if err != nil {
		a.resign("read assignment of "+name, err)
		return false
	}
	a.watch(ch, &assignmentChanged{a.gen, name})
	a.assign[name] = as
	return true
}

func (a *shell) assignments() []TopicAssignment {
	out := make([]TopicAssignment, 0, len(a.assign))
	for _, name := range sortedKeys(a.assign) {
		out = append(out, a.assign[name])
	}
	return out
}

func (a *shell) onBrokers() {
	_, ch, err := a.cfg.Store.WatchBrokerIDs()
	if err != nil {
		a.resign("watch /brokers/ids", err)
		return
	}
	a.watch(ch, &brokersChanged{a.gen})
	brokers, err := a.cfg.Store.Brokers()
	if err != nil {
		a.resign("read brokers", err)
		return
	}
	a.setBrokers(brokers)
	a.execute(a.core.BrokersChanged(brokers))
}

func (a *shell) onTopics() {
	names, ch, err := a.cfg.Store.WatchTopics()
	if err != nil {
		a.resign("watch /brokers/topics", err)
		return
	}
	a.watch(ch, &topicsChanged{a.gen})
	present := map[string]bool{}
	for _, name := range names {
		present[name] = true
		if _, known := a.assign[name]; !known && !a.readAssignment(name) {
			return
		}
	}
	for name := range a.assign {
		if !present[name] {
			delete(a.assign, name)
		}
	}
	a.execute(a.core.TopicsChanged(a.assignments()))
}

func (a *shell) onAssignment(topic string) {
	if _, known := a.assign[topic]; !known {
		return // the topic went; its watch fired for the deletion
	}
	if !a.readAssignment(topic) {
		return
	}
	a.execute(a.core.TopicsChanged(a.assignments()))
}

func (a *shell) onDeletions() {
	names, ch, err := a.cfg.Store.WatchDeleteTopics()
	if err != nil {
		a.resign("watch /admin/delete_topics", err)
		return
	}
	a.watch(ch, &deletionsChanged{a.gen})
	a.execute(a.core.DeletionRequested(names))
}

// setBrokers keeps the Sender's queues in step with the registrations: a
// restarted broker's queue is dropped and made anew (requests for its old
// incarnation are void), as Kafka's processBrokerChange does.
func (a *shell) setBrokers(brokers map[int32]BrokerInfo) {
	for id, old := range a.brokers {
		if nu, ok := brokers[id]; !ok || nu.Epoch != old.Epoch || !sameRegistration(nu, old) {
			a.cfg.Sender.RemoveBroker(id)
		}
	}
	for id, nu := range brokers {
		if old, ok := a.brokers[id]; !ok || nu.Epoch != old.Epoch || !sameRegistration(nu, old) {
			ep := a.core.interBrokerEndpoint(nu)
			a.cfg.Sender.AddBroker(id, net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))))
		}
	}
	a.brokers = brokers
}

func (a *shell) executeReply(fx Effects, reply func(kmsg.Response)) {
	if r := a.execute(fx); r != nil {
		reply(r)
	}
}

// execute carries out Effects in the order the core asks (effects.go):
// fenced writes, the versions back to the core, then the requests. It
// returns the reply to give, if any.
func (a *shell) execute(fx Effects) kmsg.Response {
	st, zkv := a.cfg.Store, a.core.cfg.EpochZkVersion
	var failed error
	if len(fx.Writes) > 0 || len(fx.Assignments) > 0 {
		var versions []int32
		var err error
		if len(fx.Assignments) > 0 {
			versions, err = a.writeWithAssignments(fx)
		} else {
			versions, err = st.WritePartitionStates(zkv, fx.Writes)
		}
		if err != nil {
			failed = err
		} else if more := a.core.Written(fx, versions); more.Reload {
			fx.Reload = true
		}
	}
	for _, name := range fx.DeleteTopics {
		if failed != nil {
			break
		}
		if err := st.DeleteTopic(zkv, name); err != nil && !errors.Is(err, ErrNoNode) {
			failed = err
		}
	}
	for _, name := range fx.RemoveMarkers {
		if failed != nil {
			break
		}
		if err := st.RemoveDeletionMarker(zkv, name); err != nil && !errors.Is(err, ErrNoNode) {
			failed = err
		}
	}
	if z := fx.ReassignZnode; z != nil && failed == nil {
		if rs, ok := st.(ReassignStore); !ok {
			failed = errNoReassignStore
		} else if err := rs.SetReassignPartitions(zkv, z.Partitions); err != nil && !errors.Is(err, ErrNoNode) {
			failed = err
		}
	}
	if failed != nil {
		why := a.cfg.Classify(failed)
		a.cfg.Log.Warn("controller: write failed", "err", failed, "kind", why)
		after := a.core.WriteFailed(why)
		if after.Reload {
			a.reload()
		} else {
			a.resign("write", failed)
		}
		return after.Reply
	}
	gen := a.gen
	for _, s := range fx.Send {
		if sr, ok := s.Req.(*kmsg.StopReplicaRequest); ok {
			broker := s.Broker
			pid, root := a.self, a.sys.Root
			a.cfg.Sender.Enqueue(broker, sr, func(r kmsg.Response, err error) {
				if resp, ok := r.(*kmsg.StopReplicaResponse); ok && err == nil {
					root.Send(pid, &stopReplicaAnswer{gen, broker, sr, resp})
				}
			})
			continue
		}
		log, broker, req := a.cfg.Log, s.Broker, s.Req
		a.cfg.Sender.Enqueue(broker, req, func(r kmsg.Response, err error) {
			if err != nil {
				log.Debug("controller: request failed", "broker", broker, "key", req.Key(), "err", err)
			}
		})
	}
	switch {
	case fx.Resign:
		a.resign("the core asked", nil)
	case fx.Reload:
		a.reload()
	}
	return fx.Reply
}

// reload starts the core over from a fresh read (its cache was stale).
func (a *shell) reload() {
	a.core = New(a.core.cfg)
	a.load()
}

// resign gives /controller up (if still ours) and campaigns again once
// the watch fires: a ZooKeeper error while controller means this broker
// cannot be sure of anything it holds.
func (a *shell) resign(what string, err error) {
	if a.core == nil {
		return
	}
	a.cfg.Log.Warn("controller: resigning", "after", what, "err", err)
	zkv := a.core.cfg.EpochZkVersion
	a.stepDown(what)
	if rerr := a.cfg.Store.ResignController(zkv); rerr != nil {
		a.cfg.Log.Warn("controller: resign", "err", rerr)
	}
	a.campaignLater()
}

// stepDown stops acting as controller (Kafka's onControllerResignation):
// the core is dropped and the queues to the brokers with it.
func (a *shell) stepDown(why string) {
	if a.core == nil {
		return
	}
	a.cfg.Log.Info("controller: stepping down", "why", why, "epoch", a.core.cfg.Epoch)
	a.core = nil
	a.gen++
	if a.balance != nil {
		a.balance.Stop()
		a.balance = nil
	}
	for id := range a.brokers {
		a.cfg.Sender.RemoveBroker(id)
	}
	a.brokers = nil
	a.assign = nil
}

func (a *shell) fail(what string, err error) {
	a.cfg.Log.Warn("controller: campaign", "step", what, "err", err)
	a.campaignLater()
}

func (a *shell) campaignLater() {
	if a.retry != nil {
		return
	}
	pid, root := a.self, a.sys.Root
	a.retry = time.AfterFunc(a.cfg.RetryAfter, func() { root.Send(pid, &retryCampaign{}) })
}

// allocateProducerIDs is Kafka's processAllocateProducerIds: a block of
// 1000 ids for a registered broker of the current epoch.
func (a *shell) allocateProducerIDs(req *kmsg.AllocateProducerIDsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AllocateProducerIDsResponse)
	if a.core == nil {
		resp.ErrorCode = int16(kerr.NotController)
		return resp
	}
	b, ok := a.core.brokers[req.BrokerID]
	switch {
	case !ok:
		resp.ErrorCode = int16(kerr.BrokerIDNotRegistered)
	case b.Epoch != req.BrokerEpoch:
		resp.ErrorCode = int16(kerr.StaleBrokerEpoch)
	}
	if resp.ErrorCode != 0 {
		return resp
	}
	blk, err := a.cfg.Store.AllocateProducerIDBlock(req.BrokerID, producerIDBlockSize)
	if err != nil {
		a.cfg.Log.Warn("controller: allocate producer ids", "err", err)
		resp.ErrorCode = int16(kerr.UnknownServerError)
		return resp
	}
	resp.ProducerIDStart = blk.Start
	resp.ProducerIDLen = int32(blk.End - blk.Start + 1)
	return resp
}

func (a *shell) writeWithAssignments(fx Effects) ([]int32, error) {
	rs, ok := a.cfg.Store.(ReassignStore)
	if !ok {
		return nil, errNoReassignStore
	}
	return rs.WriteStatesAndAssignments(a.core.cfg.EpochZkVersion, fx.Writes, fx.Assignments)
}

// watchReassignZnode arms the watch on /admin/reassign_partitions and
// reads it; a creation not yet handed to the core is queued for Start
// (starting) or handed to it now. It reports false after resigning.
func (a *shell) watchReassignZnode(starting bool) bool {
	rs, ok := a.cfg.Store.(ReassignStore)
	if !ok {
		return true
	}
	parts, czxid, exists, ch, err := rs.WatchReassignPartitions()
	if err != nil {
		a.resign("watch /admin/reassign_partitions", err)
		return false
	}
	a.watch(ch, &reassignZnodeChanged{a.gen})
	switch {
	case !exists:
		a.reassignCzxid = 0
	case starting:
		// A new controller reads the znode whatever it was.
		a.reassignCzxid = czxid
		a.core.QueueZkReassignment(parts)
	case czxid != a.reassignCzxid:
		a.reassignCzxid = czxid
		a.execute(a.core.ZkReassignment(parts))
	}
	return true
}

func (a *shell) onReassignZnode() { a.watchReassignZnode(false) }
