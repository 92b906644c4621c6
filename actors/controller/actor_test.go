package controller

import (
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// fakeStore is ZooKeeper in memory, with one-shot watches, for the shell
// test (the lead runs the shell against a real ZooKeeper at integration).
type fakeStore struct {
	mu         sync.Mutex
	ctl        int32 // -1: no /controller
	epoch, ver int32
	brokers    map[int32]BrokerInfo
	topics     map[string]TopicAssignment
	states     map[TopicPartition]PartitionState
	markers    map[string]bool
	watches    map[string][]chan struct{}
	deleted    []string
	resigned   int
	features   int // EnsureFeatures calls
	notify     chan struct{}
}

func newFakeStore() *fakeStore {
	return &fakeStore{ctl: -1, ver: -1, brokers: map[int32]BrokerInfo{}, topics: map[string]TopicAssignment{},
		states: map[TopicPartition]PartitionState{}, markers: map[string]bool{}, watches: map[string][]chan struct{}{},
		notify: make(chan struct{}, 1)}
}

func (f *fakeStore) arm(key string) <-chan struct{} {
	ch := make(chan struct{})
	f.watches[key] = append(f.watches[key], ch)
	return ch
}

// fire closes key's watches; called with mu held.
func (f *fakeStore) fire(key string) {
	for _, ch := range f.watches[key] {
		close(ch)
	}
	delete(f.watches, key)
	select {
	case f.notify <- struct{}{}:
	default:
	}
}

func (f *fakeStore) do(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
	f.fire("") // wake waiters
}

func (f *fakeStore) ElectController(id int32, _ time.Time) (bool, int32, int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctl != -1 {
		return false, 0, 0, nil
	}
	f.ctl, f.epoch, f.ver = id, f.epoch+1, f.ver+1
	f.fire("controller")
	return true, f.epoch, f.ver, nil
}

func (f *fakeStore) ResignController(v int32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resigned++
	f.fire("")
	if v == f.ver && f.ctl != -1 {
		f.ctl = -1
		f.fire("controller")
	}
	return nil
}

func (f *fakeStore) WatchController() (int32, bool, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ctl, f.ctl != -1, f.arm("controller"), nil
}

func (f *fakeStore) Brokers() (map[int32]BrokerInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.brokers), nil
}

func (f *fakeStore) WatchBrokerIDs() ([]int32, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedKeys(f.brokers), f.arm("ids"), nil
}

func (f *fakeStore) WatchTopics() ([]string, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedKeys(f.topics), f.arm("topics"), nil
}

func (f *fakeStore) WatchAssignment(t string) (TopicAssignment, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.topics[t]
	if !ok {
		return a, nil, ErrNoNode
	}
	return a, f.arm("topic/" + t), nil
}

func (f *fakeStore) PartitionStates(t string) (map[int32]PartitionState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[int32]PartitionState{}
	for tp, s := range f.states {
		if tp.Topic == t {
			out[tp.Partition] = s
		}
	}
	return out, nil
}

func (f *fakeStore) WatchDeleteTopics() ([]string, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedKeys(f.markers), f.arm("delete"), nil
}

func (f *fakeStore) WritePartitionStates(v int32, ws []StateWrite) ([]int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v != f.ver {
		return nil, ErrControllerMoved
	}
	next := maps.Clone(f.states)
	var vs []int32
	for _, w := range ws {
		cur, ok := next[w.TP]
		s := w.State.clone()
		switch {
		case w.Create && ok, !w.Create && (!ok || cur.Version != w.State.Version):
			return nil, ErrConflict
		case w.Create:
			s.Version = 0
		default:
			s.Version++
		}
		next[w.TP] = s
		vs = append(vs, s.Version)
	}
	f.states = next
	f.fire("")
	return vs, nil
}

func (f *fakeStore) DeleteTopic(v int32, t string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v != f.ver {
		return ErrControllerMoved
	}
	delete(f.topics, t)
	delete(f.markers, t)
	for tp := range f.states {
		if tp.Topic == t {
			delete(f.states, tp)
		}
	}
	f.deleted = append(f.deleted, t)
	f.fire("topics")
	f.fire("topic/" + t)
	f.fire("delete")
	return nil
}

func (f *fakeStore) RemoveDeletionMarker(v int32, t string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v != f.ver {
		return ErrControllerMoved
	}
	delete(f.markers, t)
	f.fire("delete")
	return nil
}

func (f *fakeStore) EnsureFeatures() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.features++
	return nil
}

func (f *fakeStore) AllocateProducerIDBlock(b int32, size int64) (ProducerIDBlock, error) {
	return ProducerIDBlock{Broker: b, Start: 0, End: size - 1}, nil
}

// fakeSender records requests and answers StopReplica with success.
type fakeSender struct {
	mu   sync.Mutex
	sent []Send
	st   *fakeStore
}

func (s *fakeSender) AddBroker(int32, string) {}
func (s *fakeSender) RemoveBroker(int32)      {}
func (s *fakeSender) Enqueue(id int32, req kmsg.Request, on func(kmsg.Response, error)) {
	s.mu.Lock()
	s.sent = append(s.sent, Send{id, req})
	s.mu.Unlock()
	resp := req.ResponseKind()
	if sr, ok := req.(*kmsg.StopReplicaRequest); ok {
		r := resp.(*kmsg.StopReplicaResponse)
		for _, t := range sr.Topics {
			for _, ps := range t.PartitionStates {
				pr := kmsg.NewStopReplicaResponsePartition()
				pr.Topic, pr.Partition = t.Topic, ps.Partition
				r.Partitions = append(r.Partitions, pr)
			}
		}
	}
	on(resp, nil)
	s.st.do(func() {})
}

func (s *fakeSender) count(key int16, to int32) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, x := range s.sent {
		if x.Req.Key() == key && x.Broker == to {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, f *fakeStore, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		ok := cond()
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-f.notify:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func reply[R kmsg.Response](t *testing.T) (func(kmsg.Response), func() R) {
	ch := make(chan kmsg.Response, 1)
	return func(r kmsg.Response) { ch <- r }, func() R {
		t.Helper()
		select {
		case r := <-ch:
			return r.(R)
		case <-time.After(10 * time.Second):
			t.Fatal("no reply")
		}
		panic("unreachable")
	}
}

func TestShellElectsCreatesDeletesAndStepsDown(t *testing.T) {
	st := newFakeStore()
	ep := func(id int32) BrokerInfo {
		return BrokerInfo{ID: id, Epoch: int64(10 + id), Endpoints: []Endpoint{{"PLAINTEXT", "127.0.0.1", 9000 + id, "PLAINTEXT"}}}
	}
	st.brokers[1], st.brokers[2] = ep(1), ep(2)
	st.topics["a"] = TopicAssignment{Name: "a", ID: TopicID{1}, Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 1}}}
	snd := &fakeSender{st: st}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
	pid := sys.Root.Spawn(Props(ShellConfig{Core: Config{BrokerID: 1, DeleteTopicEnable: true}, Store: st, Sender: snd}))
	t.Cleanup(func() { _ = sys.Root.StopFuture(pid).Wait() })

	waitFor(t, st, "election and the first states", func() bool {
		return st.ctl == 1 && len(st.states) == 2
	})
	st.mu.Lock()
	if st.features != 1 {
		t.Errorf("the elected controller ensured /feature %d times, want once", st.features)
	}
	st.mu.Unlock()
	if s := st.states[TopicPartition{"a", 1}]; s.Leader != 2 || !slices.Equal(s.ISR, []int32{2, 1}) || s.ControllerEpoch != 1 {
		t.Fatalf("a-1's state is %+v", s)
	}
	waitFor(t, st, "LeaderAndIsr to both brokers", func() bool {
		return snd.count(4, 1) > 0 && snd.count(4, 2) > 0
	})

	// A new topic, through the watch.
	st.do(func() {
		st.topics["b"] = TopicAssignment{Name: "b", ID: TopicID{2}, Partitions: map[int32][]int32{0: {2}}}
		st.fire("topics")
	})
	waitFor(t, st, "b's state", func() bool { _, ok := st.states[TopicPartition{"b", 0}]; return ok })

	// AlterPartition from a-0's leader: the ISR shrinks.
	cur := st.states[TopicPartition{"a", 0}]
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version, req.BrokerID, req.BrokerEpoch = 3, 1, 11
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.TopicID = TopicID{1}
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.LeaderEpoch, rp.PartitionEpoch = cur.LeaderEpoch, cur.Version
	e := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
	e.BrokerID = 1
	rp.NewEpochISR = append(rp.NewEpochISR, e)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	r, got := reply[*kmsg.AlterPartitionResponse](t)
	sys.Root.Send(pid, &AlterPartition{Req: req, Reply: r})
	if resp := got(); resp.Topics[0].Partitions[0].ErrorCode != 0 || !slices.Equal(resp.Topics[0].Partitions[0].ISR, []int32{1}) {
		t.Fatalf("AlterPartition answered %+v", resp.Topics[0].Partitions[0])
	}

	// Deletion: StopReplica answered, then the znodes go.
	st.do(func() { st.markers["b"] = true; st.fire("delete") })
	waitFor(t, st, "b deleted", func() bool { return slices.Contains(st.deleted, "b") && !st.markers["b"] })

	// Producer ids.
	ar, agot := reply[*kmsg.AllocateProducerIDsResponse](t)
	areq := kmsg.NewPtrAllocateProducerIDsRequest()
	areq.BrokerID, areq.BrokerEpoch = 2, 12
	sys.Root.Send(pid, &AllocateProducerIDs{Req: areq, Reply: ar})
	if resp := agot(); resp.ErrorCode != 0 || resp.ProducerIDLen != 1000 {
		t.Fatalf("AllocateProducerIds answered %+v", resp)
	}

	// Another controller fences us: the next write fails, and we resign
	// and stop answering as controller.
	st.do(func() { st.ver += 5; st.ctl = 2 })
	st.do(func() { delete(st.brokers, 2); st.fire("ids") })
	waitFor(t, st, "resignation", func() bool { return st.resigned > 0 })
	cr, cgot := reply[*kmsg.ControlledShutdownResponse](t)
	creq := kmsg.NewPtrControlledShutdownRequest()
	creq.Version, creq.BrokerID, creq.BrokerEpoch = 3, 1, 11
	sys.Root.Send(pid, &ControlledShutdown{Req: creq, Reply: cr})
	if resp := cgot(); resp.ErrorCode != int16(kerr.NotController) {
		t.Fatalf("ControlledShutdown after stepping down answered %+v", resp)
	}
}
