package controller

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Core is the controller's state while this broker is the controller:
// the live brokers, the topics and their assignments, the partition
// states as last written, and the topic deletions under way. It follows
// Kafka 3.9's ZooKeeper-mode KafkaController: its partition and replica
// state machines (elections, ISR shrinks, new partitions) and its
// TopicDeletionManager, with the requests its ControllerChannelManager
// builds.
//
// Every method takes one input and returns the Effects to carry out. The
// core updates its cache at once, predicting the versions its writes will
// leave (a create leaves 0, a set one more than it expected), so the
// requests it returns already carry them; a write that fails leaves the
// cache wrong, and the core then asks to resign or to be started again
// from a fresh read (Effects.Resign, Effects.Reload).
type Core struct {
	cfg Config

	brokers      map[int32]BrokerInfo // live or shutting down (registered)
	shuttingDown map[int32]bool       // asked for a controlled shutdown
	topics       map[string]*topic
	parts        map[TopicPartition]*partition
	del          deletions
	ra           reassignments // reassign.go

	fx    Effects // being built by the current call
	req   batch   // requests not yet flushed into fx.Send
	reply func(WriteError) Effects
}

type topic struct {
	name  string
	id    TopicID
	parts []*partition // by partition number
}

// phase is Kafka's PartitionState (the state machine's, not the znode).
type phase uint8

const (
	phaseNew phase = iota
	phaseOnline
	phaseOffline
	phaseNonExistent // queued for deletion
)

type partition struct {
	tp       TopicPartition
	replicas []int32
	state    *PartitionState // nil: no state znode yet
	phase    phase
	// adding and removing are the reassignment under way (reassign.go):
	// replicas is then its full replica set.
	adding, removing []int32
}

// New returns a core for a controller elected with cfg's epoch. It does
// nothing until Start.
func New(cfg Config) *Core {
	return &Core{cfg: cfg}
}

// Epoch returns the controller epoch this core acts under.
func (c *Core) Epoch() int32 { return c.cfg.Epoch }

// Start is becoming controller (Kafka's onControllerFailover): everything
// read from ZooKeeper. Calling it again throws the cache away and starts
// over from the new reads (after Effects.Reload).
func (c *Core) Start(brokers map[int32]BrokerInfo, topics []TopicAssignment, states map[TopicPartition]PartitionState, deleting []string) Effects {
	c.begin()
	c.brokers = maps.Clone(brokers)
	if c.brokers == nil {
		c.brokers = map[int32]BrokerInfo{}
	}
	c.shuttingDown = map[int32]bool{}
	c.topics = map[string]*topic{}
	c.parts = map[TopicPartition]*partition{}
	c.del = newDeletions()
	for _, a := range topics {
		c.addTopic(a)
	}
	for tp, s := range states {
		if p := c.parts[tp]; p != nil {
			s = s.clone()
			p.state = &s
		}
	}
	c.initDeletions(deleting)

	// Brokers learn the live brokers before any LeaderAndIsr (Kafka sends
	// this first for that reason).
	c.sendUpdateMetadata(c.liveIDs(), nil)

	// Replica state machine startup: every live replica is told its
	// partition's state; the dead ones are shrunk out of the ISRs.
	var online []replica
	offline := map[int32][]*partition{}
	for _, p := range c.allPartitions() {
		for _, r := range p.replicas {
			if c.online(r) {
				online = append(online, replica{p, r})
			} else {
				offline[r] = append(offline[r], p)
			}
		}
	}
	c.onlineReplicas(online)
	for _, b := range sortedKeys(offline) {
		ps := slices.DeleteFunc(offline[b], func(p *partition) bool { return c.del.queued[p.tp.Topic] })
		c.offlineReplicas(b, ps)
	}

	// Partition state machine startup.
	for _, p := range c.allPartitions() {
		switch {
		case c.del.queued[p.tp.Topic] && c.del.started[p.tp.Topic]:
			p.phase = phaseNonExistent
		case p.state == nil:
			p.phase = phaseNew
		case c.online(p.state.Leader):
			p.phase = phaseOnline
		default:
			p.phase = phaseOffline
		}
	}
	c.triggerOnline()
	c.initReassignments()
	c.resumeDeletions()
	return c.end()
}

// Written confirms the writes of the last Effects with the versions
// ZooKeeper reports. They should be the versions the core predicted; if
// not, something else writes the znodes and the core asks to reload.
func (c *Core) Written(last Effects, versions []int32) Effects {
	if len(versions) != len(last.Writes) {
		return Effects{Reload: true}
	}
	for i, w := range last.Writes {
		want := w.State.Version + 1
		if w.Create {
			want = 0
		}
		if versions[i] != want {
			return Effects{Reload: true}
		}
	}
	return Effects{}
}

// WriteFailed reports that the writes of the last Effects failed. None
// of its requests may be sent. A fenced or failed write makes the core
// resign (another controller is writing, or ZooKeeper is unreachable); a
// conflict asks for a reload. A reply the last Effects carried is
// replaced by the one the failure calls for.
func (c *Core) WriteFailed(why WriteError) Effects {
	var fx Effects
	if c.reply != nil {
		fx = c.reply(why)
		c.reply = nil
	}
	if why == WriteConflict {
		fx.Reload = true
	} else {
		fx.Resign = true
	}
	return fx
}

func (c *Core) begin() {
	if c.req.nonEmpty() {
		panic("controller: requests left unflushed by the previous call")
	}
	c.fx = Effects{}
	c.reply = nil
}

func (c *Core) end() Effects {
	c.flush()
	fx := c.fx
	c.fx = Effects{}
	return fx
}

func (c *Core) addTopic(a TopicAssignment) {
	t := &topic{name: a.Name, id: a.ID}
	c.topics[a.Name] = t
	for _, n := range sortedKeys(a.Partitions) {
		p := c.addPartition(t, n, a.Partitions[n])
		p.adding, p.removing = slices.Clone(a.Adding[n]), slices.Clone(a.Removing[n])
	}
}

func (c *Core) addPartition(t *topic, n int32, replicas []int32) *partition {
	p := &partition{tp: TopicPartition{t.name, n}, replicas: slices.Clone(replicas)}
	t.parts = append(t.parts, p)
	slices.SortFunc(t.parts, func(a, b *partition) int { return cmp.Compare(a.tp.Partition, b.tp.Partition) })
	c.parts[p.tp] = p
	return p
}

func (c *Core) removeTopic(name string) {
	t := c.topics[name]
	if t == nil {
		return
	}
	for _, p := range t.parts {
		delete(c.parts, p.tp)
		delete(c.ra.inProgress, p.tp)
	}
	delete(c.topics, name)
	c.del.forget(name)
}

// online is Kafka's isReplicaOnline: registered and not shutting down.
func (c *Core) online(b int32) bool {
	_, ok := c.brokers[b]
	return ok && !c.shuttingDown[b]
}

func (c *Core) live(b int32) bool {
	_, ok := c.brokers[b]
	return ok
}

// liveIDs are the live or shutting-down brokers, the ones requests go to.
func (c *Core) liveIDs() []int32 { return sortedKeys(c.brokers) }

func (c *Core) allPartitions() []*partition {
	var out []*partition
	for _, name := range sortedKeys(c.topics) {
		out = append(out, c.topics[name].parts...)
	}
	return out
}

// write records a state write and applies it to the cache with the
// version it will leave.
func (c *Core) write(p *partition, s PartitionState) {
	s = s.clone()
	s.ControllerEpoch = c.cfg.Epoch
	create := p.state == nil
	if create {
		s.Version = 0
	} else {
		s.Version = p.state.Version
	}
	c.fx.Writes = append(c.fx.Writes, StateWrite{TP: p.tp, State: s.clone(), Create: create})
	if !create {
		s.Version++
	}
	p.state = &s
}

// writtenByNewer reports a state a newer controller wrote: Kafka aborts
// the state change (this controller is a zombie and will find out).
func (c *Core) writtenByNewer(p *partition) bool {
	return p.state != nil && p.state.ControllerEpoch > c.cfg.Epoch
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }
