package catalog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// partKey names one partition of one topic incarnation (a re-created
// topic has a new id, so its actors never meet the old ones).
type partKey struct {
	id        metadata.TopicID
	partition int32
}

// ActorConfig is what the metadata actor is made from; one value shared
// by its incarnations.
type ActorConfig struct {
	Env  *env.Env
	Dirs map[string]partition.LogDir // by path, as in config.Broker.LogDirs
	Rand io.Reader                   // topic and cluster ids
	FS   vfs.FS                      // the data directories' filesystem
	// ProducerIDs hands out producer ids (InitProducerId); it outlives
	// incarnations.
	ProducerIDs *ProducerIDs
	// Cluster is set in cluster mode (zookeeper.connect); nil alone.
	Cluster *ClusterMode
	// OnKeystores, if set, hears the listeners whose keystore settings
	// AlterConfigs just changed on this broker, with the configuration
	// layers to read the new settings from (a TLS listener reads its
	// keystore again).
	OnKeystores func(listeners []string, layers config.Layers)
	// OnLayers, if set, hears the broker's configuration layers at
	// start (the dynamic configs stored before it) and after every state
	// change (a dynamic broker config may have changed): internal/wiring
	// applies the connection limits they resolve.
	OnLayers func(layers config.Layers)
	// CheckKeystore, if set, reads the keystore a change of this
	// broker's configs would give a listener: AlterConfigs refuses one
	// it cannot read (INVALID_CONFIG) before writing anything.
	CheckKeystore metadata.KeystoreCheck
	// OnOffsetsRole, in cluster mode, hears every change of this
	// broker's role for a __consumer_offsets partition (of n), once the
	// partition is in that role: the group coordinators follow it.
	OnOffsetsRole func(partition, n int32, leading bool, epoch int32)
	// OnTxnRole is OnOffsetsRole for __transaction_state: the
	// transaction coordinators follow it.
	OnTxnRole func(partition, n int32, leading bool, epoch int32)
	// Replication links the partitions to the cluster (cluster mode).
	Replication *partition.Replication
	// Txn links the partitions to the broker's transactions.
	Txn *partition.TxnLink
	// Followers replicates the partitions this broker follows (cluster
	// mode).
	Followers Followers
	// Throttles hears every dynamic config read from ZooKeeper (cluster
	// mode): the replication quotas (actors/replica's Throttles).
	Throttles ConfigListener
	// Stopped is closed when the actor has stopped for good.
	Stopped chan struct{}
	// First is taken by the first incarnation: the state the broker
	// loaded at start, and a channel closed once every log is open and
	// the routes are published. A restarted incarnation reloads from
	// disk.
	First atomic.Pointer[Startup]
}

// Startup hands the broker's loaded state to the metadata actor's first
// incarnation.
type Startup struct {
	State *metadata.State
	Ready chan struct{}
}

// NewActor returns the metadata actor's producer (for
// actor.PropsFromProducer).
func NewActor(cfg *ActorConfig) actor.Producer {
	return func() actor.Actor {
		a := &metadataActor{cfg: cfg, env: cfg.Env}
		if s := cfg.First.Swap(nil); s != nil {
			a.state, a.ready = s.State, s.Ready
		}
		return a
	}
}

// metadataActor is the shell around metadata.State: it feeds requests to the
// core, carries out the returned effects (spawning, reconfiguring and
// deleting partition actors, its children) and publishes the routing
// table. It never waits: answers that need partition actors are gathered
// and sent by whoever completes the gather.
type metadataActor struct {
	cfg   *ActorConfig
	env   *env.Env
	ctx   actor.Context // valid during Receive only
	state *metadata.State
	ready chan struct{} // first incarnation: closed once every log is open

	parts    map[partKey]*actor.PID
	views    map[partKey]*partition.View // beside parts: what each partition publishes for fetches
	stopping bool

	cl *clusterState // cluster mode only (cluster.go)
}

// Messages the metadata actor receives.
type (
	// AdminRequest is a request the metadata actor serves (by its body's
	// type: Metadata, CreateTopics, DeleteTopics, CreatePartitions, the
	// config APIs, DescribeCluster, DescribeLogDirs, InitProducerId).
	AdminRequest struct{ Req *wire.Request }
	// SetEndpoint is the advertised host and port, once known.
	SetEndpoint struct{ Endpoint metadata.Endpoint }
	// CreateInternalTopic makes an internal topic (__consumer_offsets)
	// unless it exists, and calls Done (on the metadata actor's goroutine
	// or a gather's) with its partition count once its logs are open and
	// whether it was just made (0 and an error if it cannot be). An
	// existing topic keeps its partition count.
	CreateInternalTopic struct {
		Name       string
		Partitions int32
		Configs    [][2]string
		// ReplicationFactor in cluster mode, and the key it was read
		// from (for the error when too few brokers are up); 0 means
		// offsets.topic.replication.factor.
		ReplicationFactor    int16
		ReplicationFactorKey string
		Done                 func(partitions int32, created bool, err error)
	}
	// AllocateProducerID asks for a new producer id, from the same blocks
	// InitProducerId hands idempotent producers theirs (the transaction
	// coordinator's ids). Done runs once, on any goroutine; a code other
	// than NONE is retriable (COORDINATOR_NOT_AVAILABLE, or
	// COORDINATOR_LOAD_IN_PROGRESS while a cluster block is on its way).
	AllocateProducerID struct {
		Done func(id int64, code kerr.Code)
	}
	deletionDone struct {
		name string
		id   metadata.TopicID
	}
	// retryDeleteTopics serves a DeleteTopics again once the files of its
	// topics are gone (handleDeleteTopics).
	retryDeleteTopics struct {
		req  *wire.Request
		body *kmsg.DeleteTopicsRequest
	}
)

func (a *metadataActor) Receive(ctx actor.Context) {
	a.ctx = ctx
	defer func() { a.ctx = nil }()
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.start()
	case *AdminRequest:
		a.serve(m.Req)
	case *InterBrokerRequest:
		a.serveInterBroker(m.Req)
	case *leaderAndIsrConfigs:
		a.leaderAndIsr(m)
		a.refreshConfigs(m.configs)
	case *TopicConfigsChanged:
		a.topicConfigsChanged(m)
	case *BrokerConfigsChanged:
		a.brokerConfigsChanged(m)
	case *awaitView:
		a.await(m)
	case *CreateInternalTopic:
		a.createInternalTopic(m)
	case *GroupConfig:
		a.groupConfig(m)
	case *AllocateProducerID:
		a.allocateProducerID(m)
	case *retryDeleteTopics:
		a.handleDeleteTopics(m.req, m.body, true)
	case *partition.Health:
		a.state.SetOffline(m.ID, m.Partition, m.Offline)
	case *SetEndpoint:
		a.state.SetEndpoint(m.Endpoint)
	case *deletionDone:
		if err := a.state.FinishDeletion(m.name, m.id); err != nil {
			a.env.Log.Error("cannot persist the end of a topic deletion; the name stays reserved until restart", "topic", m.name, "err", err)
		} else {
			a.env.Log.Info("topic deleted", "topic", m.name, "id", m.id.String())
		}
	case *actor.Stopping, *actor.Restarting:
		a.stopping = true // children stop with us: their Terminated is expected
	case *actor.Terminated:
		if !a.stopping {
			a.forget(m.Who)
		}
	case *actor.Stopped:
		close(a.cfg.Stopped)
	}
}

// start loads the state (after a restart: from disk) and spawns a
// partition actor per partition.
func (a *metadataActor) start() {
	if a.state == nil {
		s, err := Load(a.cfg.FS, a.env.Config, a.cfg.Rand, a.env.Endpoint.Load())
		if err != nil {
			// Without metadata the broker cannot serve; fail loudly and
			// let the supervisor retry from disk.
			panic(fmt.Sprintf("actors: reload metadata: %v", err))
		}
		a.state = s
	}
	a.state.SetKeystoreCheck(a.cfg.CheckKeystore)
	a.parts = make(map[partKey]*actor.PID)
	a.views = make(map[partKey]*partition.View)
	if a.cfg.Txn != nil {
		a.cfg.Txn.SetLayers(a.state.Layers()) // the dynamic configs stored before this start
	}
	if a.cfg.OnLayers != nil {
		a.cfg.OnLayers(a.state.Layers())
	}
	eff := a.state.StartAll()
	if a.cfg.Cluster != nil {
		// Until the controller says otherwise, no replica here leads.
		a.cl = &clusterState{view: a.cfg.Cluster.View.Load()}
		a.startClusterLinks()
		for i := range eff.Start {
			eff.Start[i].Follower = true
		}
	}
	var opened *gather.Gather
	var published func()
	if a.ready != nil {
		// ready closes when every log is open and the routes are
		// published, whichever comes last.
		ready, phases := a.ready, new(atomic.Int32)
		a.ready = nil
		phases.Store(2)
		published = func() {
			if phases.Add(-1) == 0 {
				close(ready)
			}
		}
		// No deadline: recovering a large log takes as long as it takes.
		opened = gather.New(len(eff.Start), 0, func([]int64, bool) { published() })
	}
	a.spawn(eff.Start, opened)
	if len(eff.Delete) > 0 {
		a.env.Log.Info("resuming interrupted topic deletions", "partitions", len(eff.Delete))
		a.delete(eff.Delete, nil)
	}
	a.publish()
	if published != nil {
		published()
	}
}

func (a *metadataActor) now() time.Time { return a.env.Now() }

// apply carries out a core's effects. done, when set, runs once every
// started partition has opened its log (or failed to) and every deleted
// one has removed its files, or a gather deadline passed: handlers answer
// from it, so a client that creates a topic finds its partitions ready,
// and one that deletes a topic finds the name free.
func (a *metadataActor) apply(eff metadata.Effects, done func()) {
	phases := new(atomic.Int32)
	finish := func() {
		if phases.Add(-1) == 0 && done != nil {
			done()
		}
	}
	phases.Store(1) // apply itself, so done cannot run before every phase is counted
	if len(eff.Start) > 0 {
		phases.Add(1)
		log := a.env.Log
		opened := gather.New(len(eff.Start), a.env.GatherTimeout, func(_ []int64, timedOut bool) {
			if timedOut {
				log.Warn("opening new partition logs is taking long; answering anyway", "partitions", len(eff.Start))
			}
			finish()
		})
		a.spawn(eff.Start, opened)
	}
	for _, rc := range eff.Reconfigure {
		cfg := partition.SegmentConfig(rc.Config)
		for key, pid := range a.parts {
			if key.id == rc.ID {
				a.ctx.Send(pid, &partition.Reconfigure{Log: cfg, Topic: rc.Config})
			}
		}
	}
	if len(eff.Delete) > 0 {
		phases.Add(1)
		a.delete(eff.Delete, finish)
	}
	if len(eff.Start) > 0 || len(eff.Delete) > 0 {
		a.publish()
	}
	if a.cfg.Txn != nil {
		a.cfg.Txn.SetLayers(a.state.Layers()) // a dynamic broker config may have changed
	}
	if a.cfg.OnLayers != nil {
		a.cfg.OnLayers(a.state.Layers())
	}
	finish()
}

// spawn starts partition actors as children, so that stopping or
// restarting this actor closes every log first.
func (a *metadataActor) spawn(specs []metadata.PartitionSpec, opened *gather.Gather) {
	for i, spec := range specs {
		var startup *partition.StartReport
		if opened != nil {
			startup = partition.NewStartReport(gather.Slot{G: opened, I: i})
		}
		// Every incarnation starts from the latest spec, so a supervised
		// restart keeps the topic configs altered since the first start.
		latest := new(atomic.Pointer[metadata.PartitionSpec])
		latest.Store(&spec)
		view := partition.NewView()
		cfg := partition.Config{Spec: latest, View: view, Dir: a.cfg.Dirs[spec.Dir], Log: a.env.Log, Now: a.env.Now, Startup: startup,
			Replication: a.cfg.Replication, Txn: a.cfg.Txn}
		props := actor.PropsFromProducer(func() actor.Actor { return partition.NewActor(cfg) }, actor.WithDispatcher(a.env.Dispatcher))
		name := "p-" + spec.ID.String() + "-" + strconv.Itoa(int(spec.Partition))
		pid, err := a.ctx.SpawnNamed(props, name)
		if err != nil {
			a.env.Log.Error("cannot start partition actor", "topic", spec.Topic, "partition", spec.Partition, "err", err)
			continue
		}
		a.parts[partKey{spec.ID, spec.Partition}] = pid
		a.views[partKey{spec.ID, spec.Partition}] = view
	}
}

// delete asks each partition actor to close its log, remove its files and
// stop; when all have, names are released and done runs.
func (a *metadataActor) delete(refs []metadata.PartitionRef, done func()) {
	a.removeFiles(refs, true, done)
}

// remove removes partitions' files and actors, keeping their topics'
// names (handleDeleteTopics on a full disk); done runs once all are gone.
func (a *metadataActor) remove(refs []metadata.PartitionRef, done func()) {
	a.removeFiles(refs, false, done)
}

// removeFiles asks each partition actor to close its log, remove its
// files and stop; when all have, it releases the topics' names (release)
// and runs done.
func (a *metadataActor) removeFiles(refs []metadata.PartitionRef, release bool, done func()) {
	self := a.ctx.Self()
	system := a.env.System
	topics := make(map[metadata.TopicID]string)
	for _, r := range refs {
		topics[r.ID] = r.Topic
	}
	log := a.env.Log
	g := gather.New(len(refs), a.env.GatherTimeout, func(_ []int64, timedOut bool) {
		if timedOut {
			log.Warn("deleting partitions took too long; topic names stay reserved until they finish", "partitions", len(refs))
		} else if release {
			for id, name := range topics {
				system.Root.Send(self, &deletionDone{name: name, id: id})
			}
		}
		if done != nil {
			done()
		}
	})
	for i, r := range refs {
		key := partKey{r.ID, r.Partition}
		pid, ok := a.parts[key]
		if !ok {
			// No actor owns it (a deletion resumed at start): remove the
			// files off this actor's goroutine.
			dir, r, i := a.cfg.Dirs[r.Dir], r, i
			go func() {
				if err := dir.Remove(r.Topic, r.Partition); err != nil && !errors.Is(err, fs.ErrNotExist) {
					log.Error("partition files could not be removed", "topic", r.Topic, "partition", r.Partition, "err", err)
				}
				g.Put(i, 0)
			}()
			continue
		}
		delete(a.parts, key)
		delete(a.views, key)
		a.ctx.Send(pid, &partition.Delete{Reply: gather.Slot{G: g, I: i}})
	}
}

// forget drops a stopped child from the table.
func (a *metadataActor) forget(who *actor.PID) {
	for key, pid := range a.parts {
		if pid.Equal(who) {
			delete(a.parts, key)
			delete(a.views, key)
			a.state.SetOffline(key.id, key.partition, true)
			a.env.Log.Error("partition actor stopped after repeated failures; the partition is offline until restart",
				"actor", who.Id)
			a.publish()
			return
		}
	}
}

// publish replaces the routing table with the current topics.
func (a *metadataActor) publish() {
	if a.cl != nil {
		a.publishCluster()
		return
	}
	r := &routing.Routes{ClusterID: a.state.ClusterID(), Topics: make(map[string]*routing.Topic), GroupConfigs: a.state.GroupConfigs()}
	for _, t := range a.state.Topics() {
		tr := &routing.Topic{Name: t.Name, ID: t.ID, Partitions: make([]*actor.PID, len(t.Partitions)),
			Views: make([]*partition.View, len(t.Partitions))}
		for i, p := range t.Partitions {
			tr.Partitions[i] = a.parts[partKey{t.ID, p.Index}]
			tr.Views[i] = a.views[partKey{t.ID, p.Index}]
		}
		r.Topics[t.Name] = tr
	}
	a.env.Routes.Publish(r)
}
