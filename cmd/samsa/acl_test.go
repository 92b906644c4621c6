package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/testkit"
)

// `samsa acl create|list|delete` against a broker with the ACL
// authorizer, its anonymous PLAINTEXT clients super users.
func TestACLCreateListDelete(t *testing.T) {
	b := testkit.StartInProcess(t, "authorizer.class.name", "kafka.security.authorizer.AclAuthorizer", "super.users", "User:ANONYMOUS")
	admin := []string{"--bootstrap-server", b.Addr, "-o", "json"}
	acl := func(args ...string) []aclRow {
		t.Helper()
		var rows []aclRow
		if err := json.Unmarshal([]byte(mustCLI(t, "", append(append([]string{"acl"}, args...), admin...)...)), &rows); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	if got := acl("create", "--allow-principal", "User:alice", "--operation", "read,describe", "--topic", "orders", "--group", "audit"); len(got) != 4 {
		t.Fatalf("created %d ACLs, want alice × {read, describe} × {topic orders, group audit}: %+v", len(got), got)
	}
	created := acl("create", "--deny-principal", "User:mallory", "--operation", "write", "--topic", "orders", "--resource-pattern-type", "prefixed")
	if len(created) != 1 || created[0].Permission != "DENY" || created[0].Pattern != "PREFIXED" || created[0].Error != "" {
		t.Fatalf("created %+v, want one prefixed DENY", created)
	}
	if got := acl("list"); len(got) != 5 {
		t.Errorf("list all: %d ACLs, want 5: %+v", len(got), got)
	}
	onTopic := acl("list", "--topic", "orders")
	if len(onTopic) != 3 {
		t.Errorf("list --topic orders: %+v, want alice's two and mallory's prefixed one", onTopic)
	}
	if got := acl("list", "--principal", "User:mallory"); len(got) != 1 || got[0].Operation != "WRITE" {
		t.Errorf("list --principal User:mallory: %+v", got)
	}
	if deleted := acl("delete", "--principal", "User:alice", "--topic", "orders"); len(deleted) != 2 {
		t.Errorf("deleted %+v, want alice's two on topic orders", deleted)
	}
	left := acl("list")
	if len(left) != 3 {
		t.Errorf("after delete: %+v, want alice's two on group audit and mallory's", left)
	}
	for _, r := range left {
		if r.Principal == "User:alice" && r.ResourceType != "GROUP" {
			t.Errorf("alice's topic ACL survived: %+v", r)
		}
	}

	for _, args := range [][]string{
		{"create", "--allow-principal", "User:a", "--topic", "t"},                       // no operation
		{"create", "--operation", "read", "--topic", "t"},                               // no principal
		{"create", "--allow-principal", "User:a", "--operation", "read"},                // no resource
		{"create", "--allow-principal", "User:a", "--operation", "fly", "--topic", "t"}, // no such operation
		{"list", "--resource-pattern-type", "glob"},
		{"delete"}, // would match everything
	} {
		_, _, err := runCLI(t, "", append(append([]string{"acl"}, args...), "--bootstrap-server", "127.0.0.1:1", "--timeout", "1s")...)
		if err == nil || strings.Contains(err.Error(), "no answer") {
			t.Errorf("samsa acl %s: %v, want a flag error", strings.Join(args, " "), err)
		}
	}
}
