package group

import (
	"slices"
	"testing"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestGroupsOf(t *testing.T) {
	f := kmsg.NewPtrOffsetFetchRequest()
	f.Version = 8
	f.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "a"}, {Group: "b"}}
	cases := []struct {
		req  kmsg.Request
		ids  []string
		all  bool
		isOK bool
	}{
		{&kmsg.JoinGroupRequest{Group: "j"}, []string{"j"}, false, true},
		{&kmsg.OffsetCommitRequest{Group: "c"}, []string{"c"}, false, true},
		{&kmsg.OffsetFetchRequest{Version: 7, Group: "f"}, []string{"f"}, false, true},
		{f, []string{"a", "b"}, false, true},
		{&kmsg.DeleteGroupsRequest{Groups: []string{"x", "y"}}, []string{"x", "y"}, false, true},
		{&kmsg.ListGroupsRequest{}, nil, true, true},
		{&kmsg.ProduceRequest{}, nil, false, false},
	}
	for _, c := range cases {
		ids, all, ok := GroupsOf(c.req)
		if !slices.Equal(ids, c.ids) || all != c.all || ok != c.isOK {
			t.Fatalf("%T: %v %v %v", c.req, ids, all, ok)
		}
	}
}

// A router with one Group per group id (the per-group-actor layout)
// splits a batch, asks each group, and merges: the same answer the
// Coordinator gives.
func TestPerGroupRoutingMatchesCoordinator(t *testing.T) {
	h := newHarness(t)
	h.stableGroup("busy", 1)
	h.commit("idle", "", -1, "t", 0, 1)

	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = []string{"busy", "idle", "none"}
	want := h.reply(h.send(req, "c")).(*kmsg.DescribeGroupsResponse)

	ids, _, _ := GroupsOf(req)
	var parts []kmsg.Response
	for _, id := range ids {
		g := h.c.Group(id)
		if g == nil {
			g = NewGroup(id, testConfig())
		}
		r := kmsg.NewPtrDescribeGroupsResponse()
		r.Version = req.Version
		r.Groups = []kmsg.DescribeGroupsResponseGroup{g.Describe(req.Version)}
		parts = append(parts, r)
	}
	got := MergeResponses(parts...).(*kmsg.DescribeGroupsResponse)
	if len(got.Groups) != 3 {
		t.Fatalf("%d groups", len(got.Groups))
	}
	for i := range want.Groups {
		if got.Groups[i].Group != want.Groups[i].Group || got.Groups[i].State != want.Groups[i].State || len(got.Groups[i].Members) != len(want.Groups[i].Members) {
			t.Fatalf("group %d: %#v vs %#v", i, got.Groups[i], want.Groups[i])
		}
	}

	l1, l2 := kmsg.NewPtrListGroupsResponse(), kmsg.NewPtrListGroupsResponse()
	l1.Groups = []kmsg.ListGroupsResponseGroup{{Group: "a"}}
	l2.ErrorCode = int16(kerr.CoordinatorLoadInProgress)
	if m := MergeResponses(l1, l2).(*kmsg.ListGroupsResponse); len(m.Groups) != 1 || kerr.Code(m.ErrorCode) != kerr.CoordinatorLoadInProgress {
		t.Fatalf("%#v", m)
	}
}
