package acl

import (
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

func TestCreateDeleteSurviveReload(t *testing.T) {
	dir := t.TempDir()
	a, err := New(Rules{}, NewFileStore(vfs.OS, dir), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := Binding{Resource: lit(ResourceTopic, "a"), Entry: allow("User:alice", "*", OpRead)}
	write := Binding{Resource: Resource{Type: ResourceTopic, Name: "p-", Pattern: PatternPrefixed}, Entry: allow("User:bob", "*", OpWrite)}
	bad := Binding{Resource: lit(ResourceCluster, "x"), Entry: read.Entry}
	errs := a.Create([]Binding{read, write, bad, read})
	if errs[0] != nil || errs[1] != nil || errs[2] == nil || errs[3] != nil {
		t.Fatalf("create: %v", errs)
	}
	if !a.Authorize("User:alice", "1.2.3.4:5", OpRead, ResourceTopic, "a") || a.Authorize("User:alice", "1.2.3.4:5", OpRead, ResourceTopic, "b") {
		t.Fatal("the created ACL does not decide")
	}
	b, err := New(Rules{}, NewFileStore(vfs.OS, dir), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.State().Len(); got != 2 {
		t.Fatalf("reloaded %d bindings, want 2 (a duplicate is stored once)", got)
	}
	matched, errs := b.Delete([]Filter{
		{Type: ResourceTopic, Pattern: PatternMatch, Name: ptr("p-x"), Op: OpAny, Perm: PermAny},
		{Type: ResourceUnknown, Pattern: PatternAny, Op: OpAny, Perm: PermAny},
	})
	if errs[0] != nil || len(matched[0]) != 1 || matched[0][0] != write || errs[1] == nil {
		t.Fatalf("delete: %v %v", matched, errs)
	}
	c, err := New(Rules{}, NewFileStore(vfs.OS, dir), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.State().Bindings(Filter{Type: ResourceAny, Pattern: PatternAny, Op: OpAny, Perm: PermAny}); len(got) != 1 || got[0] != read {
		t.Fatalf("after delete and reload: %v", got)
	}
}
