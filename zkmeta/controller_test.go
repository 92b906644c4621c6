package zkmeta_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/samsa-io/samsa/zkmeta"
)

type election struct {
	won            bool
	epoch, version int32
	err            error
}

// race runs ElectController on every client at once.
func race(clients []*zkmeta.Client, ids []int32) []election {
	out := make([]election, len(clients))
	together(len(clients), func(i int) {
		e := &out[i]
		e.won, e.epoch, e.version, e.err = clients[i].ElectController(ids[i], time.UnixMilli(1700000000000))
	})
	return out
}

func TestControllerElection(t *testing.T) {
	addr, root := zkAddr(t), chroot(t)
	clients := []*zkmeta.Client{connect(t, addr, root), connect(t, addr, root), connect(t, addr, root)}
	ids := []int32{1, 2, 3}
	if e, v, err := clients[0].ControllerEpoch(); err != nil || e != 0 || v != -1 {
		t.Fatalf("ControllerEpoch before any election = %d, %d, %v; want 0, -1", e, v, err)
	}

	var lastEpoch int32
	var lastVersion int32 = -1
	for round := 1; round <= 4; round++ {
		results := race(clients, ids)
		winner := -1
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("round %d, broker %d: %v", round, ids[i], r.err)
			}
			if r.won {
				if winner >= 0 {
					t.Fatalf("round %d: brokers %d and %d both won", round, ids[winner], ids[i])
				}
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won: %+v", round, results)
		}
		w := results[winner]
		if w.epoch != lastEpoch+1 || w.version <= lastVersion {
			t.Fatalf("round %d: epoch %d zkVersion %d after epoch %d zkVersion %d", round, w.epoch, w.version, lastEpoch, lastVersion)
		}
		for i, r := range results {
			if i != winner && (r.epoch != w.epoch || r.version != w.version) {
				t.Errorf("round %d: loser %d sees epoch %d/%d, winner wrote %d/%d", round, ids[i], r.epoch, r.version, w.epoch, w.version)
			}
		}
		ctl, exists, changed, err := clients[(winner+1)%3].WatchController()
		if err != nil || !exists || ctl.BrokerID != ids[winner] || ctl.Timestamp != 1700000000000 || ctl.KRaftControllerEpoch != -1 {
			t.Fatalf("round %d: WatchController = %+v %v %v", round, ctl, exists, err)
		}
		data, _ := raw(t, clients[0], zkmeta.PathController)
		if want := `{"version":2,"brokerid":` + strconv.Itoa(int(ids[winner])) + `,"timestamp":"1700000000000","kraftControllerEpoch":-1}`; string(data) != want {
			t.Errorf("/controller = %s, want %s", data, want)
		}
		if data, _ := raw(t, clients[0], zkmeta.PathControllerEpoch); string(data) != strconv.Itoa(int(w.epoch)) {
			t.Errorf("/controller_epoch = %q, want %d", data, w.epoch)
		}
		// A stale token cannot resign for the winner.
		if lastVersion >= 0 {
			if err := clients[winner].ResignController(lastVersion); !errors.Is(err, zkmeta.ErrControllerMoved) {
				t.Fatalf("round %d: resign with a stale zkVersion: %v, want ErrControllerMoved", round, err)
			}
		}
		notFired(t, changed, "controller watch before resigning")
		if err := clients[winner].ResignController(w.version); err != nil {
			t.Fatal(err)
		}
		fired(t, changed, "controller watch on resignation")
		if _, exists, _, err := clients[0].WatchController(); err != nil || exists {
			t.Fatalf("after resigning: exists %v, %v", exists, err)
		}
		lastEpoch, lastVersion = w.epoch, w.version
	}
}

// The controller's session ends: /controller goes, the others see it, and
// the next controller's epoch fences every write of the old one.
func TestControllerFencing(t *testing.T) {
	addr, root := zkAddr(t), chroot(t)
	a, b := connect(t, addr, root), connect(t, addr, root)
	if err := a.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	won, epochA, verA, err := a.ElectController(1, time.Now())
	if err != nil || !won || epochA != 1 {
		t.Fatalf("first election: %v %d %v", won, epochA, err)
	}
	if won, _, _, err := b.ElectController(2, time.Now()); err != nil || won {
		t.Fatalf("second broker won against a live controller: %v %v", won, err)
	}
	if err := a.CreateTopic(zkmeta.TopicAssignment{Name: "t", Partitions: map[int32][]int32{0: {1, 2}}}, nil); err != nil {
		t.Fatal(err)
	}
	tp := zkmeta.TopicPartition{Topic: "t", Partition: 0}
	vs, err := a.WritePartitionStates(verA, []zkmeta.StateWrite{{TP: tp, Create: true,
		State: zkmeta.PartitionState{Leader: 1, LeaderEpoch: 0, ControllerEpoch: epochA, ISR: []int32{1, 2}}}})
	if err != nil || len(vs) != 1 || vs[0] != 0 {
		t.Fatalf("WritePartitionStates = %v, %v", vs, err)
	}

	_, _, changed, err := b.WatchController()
	if err != nil {
		t.Fatal(err)
	}
	// a's /controller goes (as when its session expires) while a itself
	// goes on believing it is the controller.
	if err := b.Conn().Delete(root+zkmeta.PathController, -1); err != nil {
		t.Fatal(err)
	}
	fired(t, changed, "controller deleted")
	won, epochB, verB, err := b.ElectController(2, time.Now())
	if err != nil || !won || epochB != epochA+1 || verB == verA {
		t.Fatalf("re-election: %v epoch %d version %d, %v", won, epochB, verB, err)
	}

	st := zkmeta.PartitionState{Leader: 2, LeaderEpoch: 1, ControllerEpoch: epochA, ISR: []int32{2}, Version: 0}
	if _, err := a.WritePartitionStates(verA, []zkmeta.StateWrite{{TP: tp, State: st}}); !errors.Is(err, zkmeta.ErrControllerMoved) {
		t.Fatalf("stale controller's WritePartitionStates: %v, want ErrControllerMoved", err)
	}
	if _, _, err := a.UpdateLeaderAndISR(verA, map[zkmeta.TopicPartition]zkmeta.PartitionState{tp: st}); !errors.Is(err, zkmeta.ErrControllerMoved) {
		t.Fatalf("stale controller's UpdateLeaderAndISR: %v, want ErrControllerMoved", err)
	}
	if err := a.MarkTopicForDeletion("t"); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteTopic(verA, "t"); !errors.Is(err, zkmeta.ErrControllerMoved) {
		t.Fatalf("stale controller's DeleteTopic: %v, want ErrControllerMoved", err)
	}
	if err := a.RemoveDeletionMarker(verA, "t"); !errors.Is(err, zkmeta.ErrControllerMoved) {
		t.Fatalf("stale controller's RemoveDeletionMarker: %v, want ErrControllerMoved", err)
	}
	if err := a.ResignController(verA); !errors.Is(err, zkmeta.ErrControllerMoved) {
		t.Fatalf("stale controller's ResignController: %v, want ErrControllerMoved", err)
	}
	if got, err := b.PartitionState(tp); err != nil || got.Leader != 1 || got.Version != 0 {
		t.Fatalf("state after the fenced writes: %+v, %v", got, err)
	}
	// The new controller's token works.
	st.ControllerEpoch = epochB
	if vs, err := b.WritePartitionStates(verB, []zkmeta.StateWrite{{TP: tp, State: st}}); err != nil || vs[0] != 1 {
		t.Fatalf("new controller's write: %v, %v", vs, err)
	}
	if ctl, exists, err := a.GetController(); err != nil || !exists || ctl.BrokerID != 2 {
		t.Fatalf("GetController = %+v %v %v", ctl, exists, err)
	}
}
