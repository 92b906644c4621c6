package controller

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

func electReq(typ int8, tps ...TopicPartition) *kmsg.ElectLeadersRequest {
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version, req.ElectionType, req.TimeoutMillis = 2, typ, 30000
	if tps == nil {
		return req // null: every partition
	}
	req.Topics = []kmsg.ElectLeadersRequestTopic{}
	for _, tp := range tps {
		i := slices.IndexFunc(req.Topics, func(t kmsg.ElectLeadersRequestTopic) bool { return t.Topic == tp.Topic })
		if i < 0 {
			req.Topics = append(req.Topics, kmsg.ElectLeadersRequestTopic{Topic: tp.Topic})
			i = len(req.Topics) - 1
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
	}
	return req
}

// electCodes flattens an ElectLeaders answer.
func electCodes(t *testing.T, fx Effects) map[TopicPartition]kerr.Code {
	t.Helper()
	resp, ok := fx.Reply.(*kmsg.ElectLeadersResponse)
	if !ok {
		t.Fatalf("reply %T", fx.Reply)
	}
	out := map[TopicPartition]kerr.Code{}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			out[TopicPartition{rt.Topic, p.Partition}] = kerr.Code(p.ErrorCode)
		}
	}
	return out
}

func TestPreferredElectionMovesLeaderBackAndKeepsISR(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2, 3), state(2, 4, 7, 2, 3, 1), 1, 2, 3)
	fx := c.ElectLeaders(electReq(ElectPreferred, tp0))
	if codes := electCodes(t, fx); codes[tp0] != kerr.None || len(codes) != 1 {
		t.Fatalf("answer %v", codes)
	}
	if len(fx.Writes) != 1 {
		t.Fatalf("writes %+v", fx.Writes)
	}
	s := fx.Writes[0].State
	if s.Leader != 1 || s.LeaderEpoch != 5 || !slices.Equal(s.ISR, []int32{2, 3, 1}) || s.Version != 7 || s.ControllerEpoch != 2 {
		t.Fatalf("preferred election wrote %+v", s)
	}
	lai, um := map[int32]bool{}, map[int32]bool{}
	for _, snd := range fx.Send {
		switch r := snd.Req.(type) {
		case *kmsg.LeaderAndISRRequest:
			ps := r.TopicStates[0].PartitionStates[0]
			if ps.Leader != 1 || ps.LeaderEpoch != 5 || ps.ZKVersion != 8 || ps.IsNew {
				t.Fatalf("LeaderAndIsr to %d: %+v", snd.Broker, ps)
			}
			lai[snd.Broker] = true
		case *kmsg.UpdateMetadataRequest:
			um[snd.Broker] = true
		}
	}
	if len(lai) != 3 || len(um) != 3 {
		t.Fatalf("LeaderAndIsr to %v, UpdateMetadata to %v; want every replica and broker", lai, um)
	}
}

func TestPreferredElectionErrors(t *testing.T) {
	two := []TopicAssignment{{Name: "t", ID: TopicID{9}, Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 1}, 2: {3, 1}, 3: {1, 2}}}}
	c := New(Config{BrokerID: 1, Epoch: 2})
	c.Start(brokerSet(1, 2), two, map[TopicPartition]PartitionState{
		{"t", 0}: state(2, 1, 1, 2, 1), // preferred 1 live, in ISR: elected
		{"t", 1}: state(2, 1, 1, 2, 1), // preferred already leads
		{"t", 2}: state(1, 1, 1, 1),    // preferred 3 is dead
		{"t", 3}: state(2, 1, 1, 2),    // preferred 1 is not in the ISR
	}, nil)
	fx := c.ElectLeaders(electReq(ElectPreferred, TopicPartition{"t", 0}, TopicPartition{"t", 1}, TopicPartition{"t", 2},
		TopicPartition{"t", 3}, TopicPartition{"t", 9}, TopicPartition{"nope", 0}, TopicPartition{"t", 0}))
	want := map[TopicPartition]kerr.Code{
		{"t", 0}: kerr.None, {"t", 1}: kerr.ElectionNotNeeded, {"t", 2}: kerr.PreferredLeaderNotAvailable,
		{"t", 3}: kerr.PreferredLeaderNotAvailable, {"t", 9}: kerr.UnknownTopicOrPartition, {"nope", 0}: kerr.UnknownTopicOrPartition,
	}
	got := electCodes(t, fx)
	for tp, code := range want {
		if got[tp] != code {
			t.Errorf("%s: %v, want %v", tp, got[tp], code)
		}
	}
	if len(got) != len(want) {
		t.Errorf("answered %v: a duplicate partition is answered once", got)
	}
	if len(fx.Writes) != 1 || fx.Writes[0].TP != (TopicPartition{"t", 0}) {
		t.Fatalf("writes %+v", fx.Writes)
	}

	// Every partition (a null list): the ones that needed nothing are
	// left out of the answer.
	fx = c.ElectLeaders(electReq(ElectPreferred))
	got = electCodes(t, fx)
	if _, ok := got[TopicPartition{"t", 0}]; ok {
		t.Errorf("all-partitions answer lists t-0, which now needs no election: %v", got)
	}
	if got[TopicPartition{"t", 2}] != kerr.PreferredLeaderNotAvailable || len(got) != 2 {
		t.Errorf("all-partitions answer %v", got)
	}
}

func TestElectionForDeletingTopicIsRefused(t *testing.T) {
	c := New(Config{BrokerID: 1, Epoch: 2, DeleteTopicEnable: true})
	c.Start(brokerSet(1, 2), oneTopic(1, 2), map[TopicPartition]PartitionState{tp0: state(2, 1, 1, 2, 1)}, []string{"t"})
	fx := c.ElectLeaders(electReq(ElectPreferred, tp0))
	if got := electCodes(t, fx); got[tp0] != kerr.InvalidTopicException {
		t.Fatalf("answer %v", got)
	}
	if len(fx.Writes) != 0 {
		t.Fatalf("writes %+v", fx.Writes)
	}
	// Every partition: brokers no longer list the topic, nor does this.
	if got := electCodes(t, c.ElectLeaders(electReq(ElectPreferred))); len(got) != 0 {
		t.Fatalf("all-partitions answer %v lists the topic being deleted", got)
	}
}

func TestUncleanElectLeaders(t *testing.T) {
	// ISR [1], broker 1 dead, unclean not allowed by config: leaderless.
	c := started(t, Config{}, brokerSet(2, 3), state(NoLeader, 4, 7, 1), 1, 2, 3)
	before := *c.parts[tp0].state
	fx := c.ElectLeaders(electReq(ElectUnclean, tp0))
	if got := electCodes(t, fx); got[tp0] != kerr.None {
		t.Fatalf("answer %v", got)
	}
	s := fx.Writes[0].State
	if s.Leader != 2 || !slices.Equal(s.ISR, []int32{2}) || s.LeaderRecoveryState != Recovering || s.LeaderEpoch != before.LeaderEpoch+1 {
		t.Fatalf("unclean election wrote %+v", s)
	}
	// Now the leader is live: nothing to do.
	if got := electCodes(t, c.ElectLeaders(electReq(ElectUnclean, tp0))); got[tp0] != kerr.ElectionNotNeeded {
		t.Fatalf("second unclean election answered %v", got)
	}
	// No live replica at all.
	c = started(t, Config{}, brokerSet(3), state(NoLeader, 4, 7, 1), 1, 2)
	if got := electCodes(t, c.ElectLeaders(electReq(ElectUnclean, tp0))); got[tp0] != kerr.EligibleLeadersNotAvailable {
		t.Fatalf("unclean election without a live replica answered %v", got)
	}
}

func TestTopicUncleanConfigAppliesWhenLeaderDies(t *testing.T) {
	var asked []string
	cfg := Config{UncleanFor: func(topic string) bool { asked = append(asked, topic); return topic == "t" }}
	c := started(t, cfg, brokerSet(1, 2), state(1, 4, 7, 1), 1, 2)
	fx := c.BrokersChanged(brokerSet(2))
	if s := fx.Writes[0].State; s.Leader != 2 || s.LeaderRecoveryState != Recovering {
		t.Fatalf("with the topic's unclean.leader.election.enable, the election wrote %+v", s)
	}
	if !slices.Equal(asked, []string{"t"}) {
		t.Fatalf("config looked up for %v", asked)
	}
	// A clean election never looks the config up.
	asked = nil
	c = started(t, cfg, brokerSet(1, 2), state(1, 4, 7, 1, 2), 1, 2)
	c.BrokersChanged(brokerSet(2))
	if len(asked) != 0 {
		t.Fatalf("clean election looked the config up for %v", asked)
	}
}

func TestElectLeadersWriteFailureRevokesAnswer(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2), state(2, 4, 7, 2, 1), 1, 2)
	c.ElectLeaders(electReq(ElectPreferred, tp0))
	after := c.WriteFailed(WriteFenced)
	if got := electCodes(t, after); got[tp0] != kerr.NotController || !after.Resign {
		t.Fatalf("after a fenced write: %v, resign %v", got, after.Resign)
	}
}

func TestElectLeadersNotController(t *testing.T) {
	resp := ElectLeadersNotController(electReq(ElectPreferred, tp0, TopicPartition{"t", 1}))
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 || resp.Topics[0].Partitions[1].ErrorCode != int16(kerr.NotController) {
		t.Fatalf("not-controller answer %+v", resp)
	}
	if resp := ElectLeadersNotController(electReq(ElectPreferred)); resp.ErrorCode != int16(kerr.NotController) {
		t.Fatalf("not-controller answer to every partition %+v", resp)
	}
}

func TestLeaderBalanceCheck(t *testing.T) {
	// Broker 1 prefers 4 partitions and leads 3 (25% away), broker 2
	// prefers 2 and leads 1 (50% away), one of them with 2 out of the ISR.
	as := []TopicAssignment{{Name: "t", ID: TopicID{9}, Partitions: map[int32][]int32{
		0: {1, 2}, 1: {1, 2}, 2: {1, 2}, 3: {1, 2}, 4: {2, 1}, 5: {2, 1}, 6: {2, 1},
	}}}
	states := map[TopicPartition]PartitionState{
		{"t", 0}: state(2, 1, 1, 2, 1), {"t", 1}: state(1, 1, 1, 1, 2), {"t", 2}: state(1, 1, 1, 1, 2), {"t", 3}: state(1, 1, 1, 1, 2),
		{"t", 4}: state(1, 1, 1, 1, 2), {"t", 5}: state(2, 1, 1, 2, 1), {"t", 6}: state(1, 1, 1, 1),
	}
	elected := func(pct int) []TopicPartition {
		c := New(Config{BrokerID: 1, Epoch: 2, LeaderImbalancePerBrokerPercentage: pct})
		c.Start(brokerSet(1, 2), as, states, nil)
		var out []TopicPartition
		for _, w := range c.CheckLeaderBalance().Writes {
			if w.State.Leader != as[0].Partitions[w.TP.Partition][0] {
				t.Fatalf("balance elected %+v", w)
			}
			out = append(out, w.TP)
		}
		return out
	}
	if got := elected(10); !slices.Equal(got, []TopicPartition{{"t", 0}, {"t", 4}}) {
		t.Errorf("at 10%%: elected %v, want t-0 and t-4 (t-6's preferred replica is not in its ISR)", got)
	}
	if got := elected(30); !slices.Equal(got, []TopicPartition{{"t", 4}}) {
		t.Errorf("at 30%%: elected %v, want t-4 only (broker 1 is 25%% off)", got)
	}
	if got := elected(100); len(got) != 0 {
		t.Errorf("at 100%%: elected %v", got)
	}
}

// TestShellElectLeadersAndBalanceTimer: the shell answers ElectLeaders as
// controller, runs the balance check on its timer, and answers
// NOT_CONTROLLER once it stepped down.
func TestShellElectLeadersAndBalanceTimer(t *testing.T) {
	st := newFakeStore()
	for id := int32(1); id <= 2; id++ {
		st.brokers[id] = BrokerInfo{ID: id, Epoch: int64(10 + id), Endpoints: []Endpoint{{"PLAINTEXT", "127.0.0.1", 9000 + id, "PLAINTEXT"}}}
	}
	st.topics["a"] = TopicAssignment{Name: "a", ID: TopicID{1}, Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 1}}}
	// a-0 is led by 2, not its preferred replica 1; a-1 by its preferred.
	st.states[TopicPartition{"a", 0}] = state(2, 3, 5, 2, 1)
	st.states[TopicPartition{"a", 1}] = state(2, 3, 5, 2, 1)
	snd := &fakeSender{st: st}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
	cfg := Config{BrokerID: 1, AutoLeaderRebalance: true, LeaderImbalanceCheckInterval: 20 * time.Millisecond}
	pid := sys.Root.Spawn(Props(ShellConfig{Core: cfg, Store: st, Sender: snd}))
	t.Cleanup(func() { _ = sys.Root.StopFuture(pid).Wait() })

	waitFor(t, st, "the balance check electing a-0's preferred replica", func() bool {
		s := st.states[TopicPartition{"a", 0}]
		return st.ctl == 1 && s.Leader == 1 && s.LeaderEpoch == 4
	})

	r, got := reply[*kmsg.ElectLeadersResponse](t)
	sys.Root.Send(pid, &ElectLeaders{Req: electReq(ElectPreferred, TopicPartition{"a", 0}, TopicPartition{"a", 1}), Reply: r})
	resp := got()
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("ElectLeaders answered %+v", resp)
	}
	for _, p := range resp.Topics[0].Partitions {
		if kerr.Code(p.ErrorCode) != kerr.ElectionNotNeeded {
			t.Errorf("a-%d: %v, want ELECTION_NOT_NEEDED", p.Partition, kerr.Code(p.ErrorCode))
		}
	}

	st.do(func() { st.ver += 5; st.ctl = 2 })
	st.do(func() { delete(st.brokers, 2); st.fire("ids") })
	waitFor(t, st, "resignation", func() bool { return st.resigned > 0 })
	r, got = reply[*kmsg.ElectLeadersResponse](t)
	sys.Root.Send(pid, &ElectLeaders{Req: electReq(ElectPreferred, TopicPartition{"a", 0}), Reply: r})
	if resp := got(); kerr.Code(resp.Topics[0].Partitions[0].ErrorCode) != kerr.NotController {
		t.Fatalf("ElectLeaders after stepping down answered %+v", resp)
	}
}

func TestUncleanEnabledElectsLeaderlessPartitions(t *testing.T) {
	allowed := map[string]bool{}
	cfg := Config{UncleanFor: func(topic string) bool { return allowed[topic] }}
	c := started(t, cfg, brokerSet(2), state(NoLeader, 4, 7, 1), 1, 2)
	if fx := c.UncleanEnabled(""); len(fx.Writes) != 0 {
		t.Fatalf("with unclean election still off, wrote %+v", fx.Writes)
	}
	allowed["t"] = true
	if fx := c.UncleanEnabled("other"); len(fx.Writes) != 0 {
		t.Fatalf("turning it on for another topic wrote %+v", fx.Writes)
	}
	fx := c.UncleanEnabled("t")
	if len(fx.Writes) != 1 || fx.Writes[0].State.Leader != 2 || fx.Writes[0].State.LeaderRecoveryState != Recovering {
		t.Fatalf("turning it on for t wrote %+v", fx.Writes)
	}
}
