package actors

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Every FindCoordinator version names this broker for a group: v0-3 in
// the top-level fields, v4+ per key of a batch.
func TestFindCoordinatorVersions(t *testing.T) {
	b := startBroker(t, t.TempDir())
	for v := int16(0); v <= 6; v++ {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorKey, req.CoordinatorKeys = v, "g1", []string{"g1", "g2"}
		resp := call(t, b, req).(*kmsg.FindCoordinatorResponse)
		ep := b.env.Endpoint.Load()
		if v < 4 {
			if resp.ErrorCode != 0 || resp.NodeID != 0 || resp.Host != ep.Host || resp.Port != ep.Port {
				t.Errorf("v%d: %+v, want broker 0 at %s:%d", v, resp, ep.Host, ep.Port)
			}
			continue
		}
		if len(resp.Coordinators) != 2 {
			t.Fatalf("v%d: %d coordinators for 2 keys", v, len(resp.Coordinators))
		}
		for i, c := range resp.Coordinators {
			if c.Key != req.CoordinatorKeys[i] || c.ErrorCode != 0 || c.NodeID != 0 || c.Port != ep.Port {
				t.Errorf("v%d key %d: %+v", v, i, c)
			}
		}
	}
}

// Batched requests over groups of different __consumer_offsets partitions
// are split per coordinator and put back in the request's order;
// ListGroups asks every coordinator.
func TestGroupBatchesSplitAndMerged(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopicWith(t, b, "orders", 1)
	ids := []string{"alpha", "bravo", "charlie", "delta"}
	parts := map[int32]bool{}
	for i, id := range ids {
		parts[group.PartitionFor(id, 50)] = true
		c := commitReq("orders", int64(10*(i+1)))
		c.Group = id
		// The first request makes __consumer_offsets; its coordinators
		// have nothing to load and serve at once.
		if code := kerr.Code(call(t, b, c).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode); code != kerr.None {
			t.Fatalf("commit %s: %v", id, code)
		}
	}
	if len(parts) < 3 {
		t.Fatalf("the groups share partitions %v; pick ids that spread", parts)
	}

	f := kmsg.NewPtrOffsetFetchRequest()
	f.Version = 8
	for _, id := range []string{"delta", "alpha", "nobody", "charlie"} {
		f.Groups = append(f.Groups, kmsg.OffsetFetchRequestGroup{Group: id})
	}
	fr := call(t, b, f).(*kmsg.OffsetFetchResponse)
	want := map[string]int64{"delta": 40, "alpha": 10, "nobody": -1, "charlie": 30}
	if len(fr.Groups) != 4 {
		t.Fatalf("OffsetFetch v8 answered %d groups, want 4", len(fr.Groups))
	}
	for i, g := range fr.Groups {
		if g.Group != f.Groups[i].Group {
			t.Errorf("OffsetFetch v8 group %d is %s, want %s (request order)", i, g.Group, f.Groups[i].Group)
		}
		got := int64(-1)
		if len(g.Topics) > 0 {
			got = g.Topics[0].Partitions[0].Offset
		}
		if got != want[g.Group] {
			t.Errorf("OffsetFetch v8 %s: offset %d, want %d", g.Group, got, want[g.Group])
		}
	}

	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Version, d.Groups = 5, []string{"charlie", "nobody", "bravo"}
	dr := call(t, b, d).(*kmsg.DescribeGroupsResponse)
	for i, g := range dr.Groups {
		if g.Group != d.Groups[i] {
			t.Errorf("DescribeGroups group %d is %s, want %s", i, g.Group, d.Groups[i])
		}
	}

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"delta", "bravo", "nobody"}
	delr := call(t, b, del).(*kmsg.DeleteGroupsResponse)
	wantDel := []int16{0, 0, kerr.GroupIDNotFound.Int16()}
	for i, g := range delr.Groups {
		if g.Group != del.Groups[i] || g.ErrorCode != wantDel[i] {
			t.Errorf("DeleteGroups entry %d: %s %v, want %s %v", i, g.Group, kerr.Code(g.ErrorCode), del.Groups[i], kerr.Code(wantDel[i]))
		}
	}

	lr := call(t, b, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
	var listed []string
	for _, g := range lr.Groups {
		listed = append(listed, g.Group)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, []string{"alpha", "charlie"}) {
		t.Errorf("ListGroups after deleting delta and bravo: %v, want [alpha charlie]", listed)
	}
}

func commitReq(topic string, offset int64) *kmsg.OffsetCommitRequest {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version, r.Group, r.Generation = 8, "g", -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, offset
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	return r
}
