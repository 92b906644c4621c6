package fetch

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// TestReplicaIDByVersion: v15 moved the follower's id into ReplicaState
// (KIP-903); the top-level field is what older versions carry.
func TestReplicaIDByVersion(t *testing.T) {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.ReplicaState.ID = 14, 2, 3
	if got := ReplicaID(req); got != 2 {
		t.Fatalf("v14: replica id %d, want 2", got)
	}
	for _, v := range []int16{15, 16, 17} {
		req.Version = v
		if got := ReplicaID(req); got != 3 {
			t.Fatalf("v%d: replica id %d, want the ReplicaState's 3", v, got)
		}
	}
	// A consumer's v17 fetch decoded from the wire: no ReplicaState tag.
	c := kmsg.NewPtrFetchRequest()
	c.Version = 17
	var d kmsg.FetchRequest
	d.Version = 17
	if err := d.ReadFrom(c.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if got := ReplicaID(&d); got >= 0 {
		t.Fatalf("consumer v17: replica id %d, want negative", got)
	}
}

// testView is a cluster view with brokers 1-3 (rack r<id>) and topic t
// (partition 0 led by 2 at epoch 7; partition 1 unknown).
func testView(t *testing.T) (*cluster.Table, [16]byte) {
	t.Helper()
	id := [16]byte{9, 9, 9}
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version = 8
	for b := int32(1); b <= 3; b++ {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = b
		rack := "r" + string(rune('0'+b))
		lb.Rack = &rack
		ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
		ep.Host, ep.Port, ep.ListenerName = "h", 9090+b, "PLAINTEXT"
		lb.Endpoints = append(lb.Endpoints, ep)
		um.LiveBrokers = append(um.LiveBrokers, lb)
	}
	ts := kmsg.NewUpdateMetadataRequestTopicState()
	ts.Topic, ts.TopicID = "t", id
	ps := kmsg.NewUpdateMetadataRequestTopicPartition()
	ps.Topic, ps.Partition, ps.Leader, ps.LeaderEpoch, ps.Replicas, ps.ISR = "t", 0, 2, 7, []int32{1, 2, 3}, []int32{1, 2, 3}
	ts.PartitionStates = append(ts.PartitionStates, ps)
	um.TopicStates = append(um.TopicStates, ts)
	v, code := cluster.Empty("c").Apply(um)
	if code != kerr.None {
		t.Fatal(code)
	}
	tab := &cluster.Table{}
	tab.Publish(v)
	return tab, id
}

// TestLeaderHints: a v16+ answer names the current leader of a
// partition answered NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH, and
// that leader's endpoint once in NodeEndpoints (KIP-951); v13 carries
// neither, and other errors no CurrentLeader.
func TestLeaderHints(t *testing.T) {
	tab, id := testView(t)
	svc := &Service{env: &env.Env{Log: discardLogger(), Cluster: tab, ClientListener: "PLAINTEXT"}}
	codes := []kerr.Code{kerr.NotLeaderOrFollower, kerr.FencedLeaderEpoch, kerr.OffsetOutOfRange, kerr.NotLeaderOrFollower}
	parts := []int32{0, 0, 0, 1}
	for _, v := range []int16{13, 16, 17} {
		fc := fetchContext{usesIDs: true}
		o := &fetchOp{svc: svc}
		for i, c := range codes {
			fc.targets = append(fc.targets, fetchTarget{key: fetchKey{id: id, partition: parts[i]}})
			o.slots = append(o.slots, partition.FetchSlot{})
			o.outs = append(o.outs, fetchOutcome{code: c, hw: -1, lso: -1, logStart: -1})
			o.include = append(o.include, true)
		}
		req := kmsg.NewPtrFetchRequest()
		req.Version = v
		k := answerAsRead(t, req, &fc, o)
		ps := k.Topics[0].Partitions
		if v < 16 {
			if len(k.Brokers) != 0 || ps[0].CurrentLeader.LeaderID != -1 {
				t.Fatalf("v%d: leader hints before v16: %+v %+v", v, k.Brokers, ps[0].CurrentLeader)
			}
			continue
		}
		for i, want := range []kmsg.FetchResponseTopicPartitionCurrentLeader{{LeaderID: 2, LeaderEpoch: 7}, {LeaderID: 2, LeaderEpoch: 7}, {LeaderID: -1, LeaderEpoch: -1}, {LeaderID: -1, LeaderEpoch: -1}} {
			if got := ps[i].CurrentLeader; got.LeaderID != want.LeaderID || got.LeaderEpoch != want.LeaderEpoch {
				t.Fatalf("v%d partition %d (%s): current leader %+v, want %+v", v, i, codes[i], got, want)
			}
		}
		if len(k.Brokers) != 1 || k.Brokers[0].NodeID != 2 || k.Brokers[0].Port != 9092 || k.Brokers[0].Rack == nil || *k.Brokers[0].Rack != "r2" {
			t.Fatalf("v%d: node endpoints %+v, want broker 2 once", v, k.Brokers)
		}
	}
}

// answerAsRead builds the answer of o to req, encodes it as the broker
// sends it, and reads it back as a client does.
func answerAsRead(t *testing.T, req *kmsg.FetchRequest, fc *fetchContext, o *fetchOp) *kmsg.FetchResponse {
	t.Helper()
	var raw []byte
	out, err := wire.EncodeFetchResponse(1, buildFetchResponse(req, fc, o))
	if err == nil {
		raw, err = out.AppendTo(nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	k := kmsg.NewPtrFetchResponse()
	k.Version = req.Version
	if err := k.ReadFrom(raw[9:]); err != nil { // size, correlation id, header tags
		t.Fatal(err)
	}
	return k
}
