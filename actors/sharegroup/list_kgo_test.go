package sharegroup_test

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// listGroups sends ListGroups v5 with the filters and returns group id ->
// "type/state".
func listGroups(t *testing.T, cl *kgo.Client, types, states []string) map[string]string {
	t.Helper()
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	req.TypesFilter, req.StatesFilter = types, states
	resp, err := req.RequestWith(ctxT(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, g := range resp.Groups {
		out[g.Group] = g.GroupType + "/" + g.GroupState
		if g.GroupType == "share" && g.ProtocolType != "share" {
			t.Errorf("share group %s listed with protocol type %q", g.Group, g.ProtocolType)
		}
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestListGroupsShareGroups: share groups are listed with type "share"
// next to classic groups, and v5's type filter and v4's state filter
// pick them as Kafka's do (kafka-share-groups.sh --list asks for type
// share only).
func TestListGroupsShareGroups(t *testing.T) {
	n := testkit.StartInProcess(t)
	adm, cl := n.Admin(t)
	if _, err := adm.CreateTopics(ctxT(t), 1, 1, nil, "lg"); err != nil {
		t.Fatal(err)
	}
	// No __consumer_offsets yet: a share group is listed all the same.
	member := join(t, n, "share-g", "m1", "lg")
	if got := listGroups(t, cl, nil, nil); got["share-g"] != "share/Stable" {
		t.Fatalf("before any classic group: %v", got)
	}
	// A classic group, made by committing an offset.
	if _, err := adm.CommitOffsets(ctxT(t), "classic-g", offsetsOf("lg", 0, 1)); err != nil {
		t.Fatal(err)
	}
	all := listGroups(t, cl, nil, nil)
	if all["share-g"] != "share/Stable" || all["classic-g"] != "classic/Empty" {
		t.Fatalf("all groups: %v", all)
	}
	for _, c := range []struct {
		types, states []string
		want          []string
	}{
		{[]string{"share"}, nil, []string{"share-g"}},
		{[]string{"SHARE"}, nil, []string{"share-g"}},
		{[]string{"classic"}, nil, []string{"classic-g"}},
		{[]string{"consumer"}, nil, nil},
		{[]string{"classic", "share"}, nil, []string{"classic-g", "share-g"}},
		{nil, []string{"Stable"}, []string{"share-g"}},
		{[]string{"share"}, []string{"Empty"}, nil},
	} {
		if got := keys(listGroups(t, cl, c.types, c.states)); !slices.Equal(got, c.want) {
			t.Errorf("types %v states %v: listed %v, want %v", c.types, c.states, got, c.want)
		}
	}
	// A share group with a member is not deleted.
	if got := deleteGroups(t, cl, "share-g"); got["share-g"] != kerr.NonEmptyGroup {
		t.Fatalf("DeleteGroups of a share group with a member: %v", got)
	}
	// The member leaves: the share group is Empty, and listed so.
	member.leave()
	if got := listGroups(t, cl, []string{"share"}, []string{"empty"}); got["share-g"] != "share/Empty" || len(got) != 1 {
		t.Fatalf("after the member left: %v", got)
	}
	// One DeleteGroups deletes the empty share group and the classic
	// group; a second finds neither.
	if got := deleteGroups(t, cl, "share-g", "classic-g", "nobody"); got["share-g"] != nil || got["classic-g"] != nil || got["nobody"] != kerr.GroupIDNotFound {
		t.Fatalf("DeleteGroups: %v", got)
	}
	if got := listGroups(t, cl, nil, nil); len(got) != 0 {
		t.Fatalf("after DeleteGroups: %v", got)
	}
	if got := deleteGroups(t, cl, "share-g"); got["share-g"] != kerr.GroupIDNotFound {
		t.Fatalf("DeleteGroups again: %v", got)
	}
}

// deleteGroups sends DeleteGroups v2 and returns each group's error, in
// the request's order.
func deleteGroups(t *testing.T, cl *kgo.Client, ids ...string) map[string]error {
	t.Helper()
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Version, req.Groups = 2, ids
	resp, err := req.RequestWith(ctxT(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]error{}
	for i, g := range resp.Groups {
		if i >= len(ids) || g.Group != ids[i] {
			t.Fatalf("DeleteGroups answered %+v for %v", resp.Groups, ids)
		}
		out[g.Group] = kerr.ErrorForCode(g.ErrorCode)
	}
	return out
}

// leave sends the member's last heartbeat (epoch -1).
func (c *shareClient) leave() {
	c.t.Helper()
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.Version = 1
	hb.GroupID, hb.MemberID, hb.MemberEpoch = c.group, c.member, -1
	resp, err := hb.RequestWith(ctxT(c.t), c.cl)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		c.t.Fatalf("leave %s: %v", c.member, err)
	}
}

func offsetsOf(topic string, partition int32, at int64) kadm.Offsets {
	o := kadm.Offsets{}
	o.Add(kadm.Offset{Topic: topic, Partition: partition, At: at, LeaderEpoch: -1})
	return o
}
