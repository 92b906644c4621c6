package zkmeta_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/samsa-io/samsa/zkmeta"
)

func TestACLChangeEncoding(t *testing.T) {
	cases := []struct {
		r    zkmeta.ACLResource
		want string
	}{
		{zkmeta.ACLResource{Type: "Topic", Name: "orders"}, "TOPIC:orders"},
		{zkmeta.ACLResource{Type: "TransactionalId", Name: "tx:1"}, "TRANSACTIONAL_ID:tx:1"},
		{zkmeta.ACLResource{Type: "Group", Name: "g-", Prefixed: true},
			`{"version":1,"resourceType":"GROUP","name":"g-","patternType":"PREFIXED"}`},
	}
	for _, c := range cases {
		if got := string(zkmeta.EncodeACLChange(c.r)); got != c.want {
			t.Errorf("EncodeACLChange(%+v) = %s, want %s", c.r, got, c.want)
		}
		back, err := zkmeta.DecodeACLChange(c.r.Prefixed, []byte(c.want))
		if err != nil || back != c.r {
			t.Errorf("DecodeACLChange(%s) = %+v, %v", c.want, back, err)
		}
	}
	// Kafka 2.x wrote the literal store's type in path case.
	if r, err := zkmeta.DecodeACLChange(false, []byte("Topic:a")); err != nil || r.Type != "Topic" || r.Name != "a" {
		t.Errorf("Topic:a = %+v, %v", r, err)
	}
	for _, bad := range []string{"nocolon", "Widget:a"} {
		if _, err := zkmeta.DecodeACLChange(false, []byte(bad)); !errors.Is(err, zkmeta.ErrBadACLChange) {
			t.Errorf("%q: %v, want ErrBadACLChange", bad, err)
		}
	}
	if _, err := zkmeta.DecodeACLChange(true, []byte("{")); !errors.Is(err, zkmeta.ErrBadACLChange) {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestUpdateACLAndNotifications(t *testing.T) {
	a, b := newClient(t), newClient(t)
	lit := zkmeta.ACLResource{Type: "Topic", Name: "t"}
	pre := zkmeta.ACLResource{Type: "Group", Name: "g-", Prefixed: true}
	nodes, changed, err := b.WatchACLChanges(false)
	if err != nil || len(nodes) != 0 {
		t.Fatalf("WatchACLChanges = %v, %v", nodes, err)
	}
	if _, err := a.UpdateACL(lit, func(old []byte) []byte { return []byte("one") }); err != nil {
		t.Fatal(err)
	}
	fired(t, changed, "ACL change notification")
	if _, err := a.UpdateACL(pre, func(old []byte) []byte { return []byte("p") }); err != nil {
		t.Fatal(err)
	}
	got, err := b.UpdateACL(lit, func(old []byte) []byte { return append(old, "+two"...) })
	if err != nil || string(got) != "one+two" {
		t.Fatalf("read-modify-write: %s, %v", got, err)
	}
	if data, _ := raw(t, a, "/kafka-acl/Topic/t"); string(data) != "one+two" {
		t.Errorf("/kafka-acl/Topic/t = %s", data)
	}
	if data, _ := raw(t, a, "/kafka-acl-extended/prefixed/Group/g-"); string(data) != "p" {
		t.Errorf("/kafka-acl-extended/prefixed/Group/g- = %s", data)
	}
	rs, err := b.ACLResources()
	if err != nil || len(rs) != 2 || !slices.Contains(rs, lit) || !slices.Contains(rs, pre) {
		t.Errorf("ACLResources = %+v, %v", rs, err)
	}
	nodes, _, err = b.WatchACLChanges(false)
	if err != nil || !slices.Equal(nodes, []string{"acl_changes_0000000000", "acl_changes_0000000001"}) {
		t.Fatalf("literal notifications %v, %v", nodes, err)
	}
	if r, created, err := b.ACLChange(false, nodes[1]); err != nil || r != lit || created.IsZero() {
		t.Errorf("ACLChange = %+v, %v", r, err)
	}
	ext, _, err := b.WatchACLChanges(true)
	if err != nil || len(ext) != 1 {
		t.Fatalf("extended notifications %v, %v", ext, err)
	}
	if r, _, err := b.ACLChange(true, ext[0]); err != nil || r != pre {
		t.Errorf("extended ACLChange = %+v, %v", r, err)
	}
	if err := b.DeleteACLChange(true, ext[0]); err != nil {
		t.Fatal(err)
	}
	if ext, _, err = b.WatchACLChanges(true); err != nil || len(ext) != 0 {
		t.Errorf("after the purge: %v, %v", ext, err)
	}
	if _, err := a.UpdateACL(lit, func([]byte) []byte { return nil }); err != nil {
		t.Fatal(err)
	}
	if data, err := b.ACL(lit); err != nil || data != nil {
		t.Errorf("a deleted resource reads %q, %v", data, err)
	}
}
