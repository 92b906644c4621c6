package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// In a cluster, a partition the cluster has but this broker does not
// host is NOT_LEADER_OR_FOLLOWER (the admin client looks for the leader
// again), as Kafka's ReplicaManager answers; what the cluster lacks is
// UNKNOWN_TOPIC_OR_PARTITION and a malformed name INVALID_TOPIC_EXCEPTION
// with the reason.
func TestDescribeProducersClusterCodes(t *testing.T) {
	view := cluster.Empty("c")
	view.Topics["elsewhere"] = &cluster.Topic{Name: "elsewhere", Partitions: []*cluster.Partition{{Leader: 2, Replicas: []int32{2}}}}
	e := &env.Env{Routes: routing.NewTable(), Cluster: cluster.NewTable(view)}
	body := kmsg.NewPtrDescribeProducersRequest()
	for _, tp := range []struct {
		topic string
		parts []int32
	}{{"elsewhere", []int32{0, 1}}, {"nowhere", []int32{0}}, {"bad name", []int32{3}}} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = tp.topic, tp.parts
		body.Topics = append(body.Topics, rt)
	}
	var got *wire.Response
	handleDescribeProducers(&Services{Env: e}, &wire.Request{Header: wire.RequestHeader{APIKey: body.Key()}, Body: body,
		Reply: func(r *wire.Response) { got = r }})
	if got == nil {
		t.Fatal("no answer")
	}
	raw, err := got.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := body.ResponseKind().(*kmsg.DescribeProducersResponse)
	if err := resp.ReadFrom(raw[9:]); err != nil { // size, correlation id, header tags (v0 is flexible)
		t.Fatal(err)
	}
	want := [][]kerr.Code{{kerr.NotLeaderOrFollower, kerr.UnknownTopicOrPartition}, {kerr.UnknownTopicOrPartition}, {kerr.InvalidTopicException}}
	for i, rt := range resp.Topics {
		for j, p := range rt.Partitions {
			if rt.Topic != body.Topics[i].Topic || p.Partition != body.Topics[i].Partitions[j] || kerr.Code(p.ErrorCode) != want[i][j] {
				t.Errorf("%s/%d: code %d, want %d", rt.Topic, p.Partition, p.ErrorCode, want[i][j])
			}
		}
	}
	if m := resp.Topics[2].Partitions[0].ErrorMessage; m == nil || *m == "" {
		t.Error("INVALID_TOPIC_EXCEPTION without the reason")
	}
}
