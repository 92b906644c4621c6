package acl

import "testing"

func lit(typ ResourceType, name string) Resource {
	return Resource{Type: typ, Name: name, Pattern: PatternLiteral}
}

func allow(p, host string, op Operation) Entry {
	return Entry{Principal: p, Host: host, Op: op, Perm: PermAllow}
}
func deny(p, host string, op Operation) Entry {
	return Entry{Principal: p, Host: host, Op: op, Perm: PermDeny}
}

func TestAuthorizeRules(t *testing.T) {
	alice, bob := "User:alice", "User:bob"
	prefixed := Resource{Type: ResourceTopic, Name: "logs-", Pattern: PatternPrefixed}
	st := NewState(map[Resource][]Entry{
		lit(ResourceTopic, "a"):           {allow(alice, "*", OpRead), deny(alice, "10.0.0.9", OpRead)},
		lit(ResourceTopic, "w"):           {allow(alice, "*", OpWrite)},
		lit(ResourceTopic, "all"):         {allow(alice, "*", OpAll)},
		lit(ResourceTopic, "cfg"):         {allow(alice, "*", OpAlterConfigs)},
		lit(ResourceTopic, "denied-all"):  {allow(WildcardPrincipal, "*", OpRead), deny(bob, "*", OpAll)},
		lit(ResourceGroup, Wildcard):      {allow(bob, "*", OpRead)},
		prefixed:                          {allow(bob, "*", OpWrite)},
		lit(ResourceCluster, ClusterName): {allow(alice, "1.2.3.4", OpCreate)},
	})
	rules := &Rules{SuperUsers: map[string]bool{"User:admin": true}}
	open := &Rules{AllowIfNoACL: true}
	cases := []struct {
		name  string
		rules *Rules
		r     Request
		want  bool
	}{
		{"literal allow", rules, Request{alice, "1.1.1.1", OpRead, ResourceTopic, "a"}, true},
		{"deny on host wins", rules, Request{alice, "10.0.0.9", OpRead, ResourceTopic, "a"}, false},
		{"other principal", rules, Request{bob, "1.1.1.1", OpRead, ResourceTopic, "a"}, false},
		{"other operation", rules, Request{alice, "1.1.1.1", OpWrite, ResourceTopic, "a"}, false},
		{"read implies describe", rules, Request{alice, "1.1.1.1", OpDescribe, ResourceTopic, "a"}, true},
		{"write implies describe", rules, Request{alice, "1.1.1.1", OpDescribe, ResourceTopic, "w"}, true},
		{"write does not imply read", rules, Request{alice, "1.1.1.1", OpRead, ResourceTopic, "w"}, false},
		{"alter configs implies describe configs", rules, Request{alice, "h", OpDescribeConfigs, ResourceTopic, "cfg"}, true},
		{"alter configs does not imply describe", rules, Request{alice, "h", OpDescribe, ResourceTopic, "cfg"}, false},
		{"all implies delete", rules, Request{alice, "h", OpDelete, ResourceTopic, "all"}, true},
		{"deny all beats wildcard allow", rules, Request{bob, "h", OpRead, ResourceTopic, "denied-all"}, false},
		{"wildcard principal", rules, Request{"User:carol", "h", OpRead, ResourceTopic, "denied-all"}, true},
		{"wildcard principal is users only", rules, Request{"Group:x", "h", OpRead, ResourceTopic, "denied-all"}, false},
		{"wildcard resource", rules, Request{bob, "h", OpRead, ResourceGroup, "any-group"}, true},
		{"prefixed match", rules, Request{bob, "h", OpWrite, ResourceTopic, "logs-app"}, true},
		{"prefixed needs the prefix", rules, Request{bob, "h", OpWrite, ResourceTopic, "log"}, false},
		{"cluster host-bound", rules, Request{alice, "1.2.3.4", OpCreate, ResourceCluster, ClusterName}, true},
		{"cluster other host", rules, Request{alice, "1.2.3.5", OpCreate, ResourceCluster, ClusterName}, false},
		{"super user", rules, Request{"User:admin", "h", OpDelete, ResourceTopic, "a"}, true},
		{"no acl: denied by default", rules, Request{alice, "h", OpRead, ResourceTopic, "none"}, false},
		{"no acl: allow.everyone.if.no.acl.found", open, Request{alice, "h", OpRead, ResourceTopic, "none"}, true},
		{"acl exists: allow.everyone does not apply", open, Request{bob, "h", OpRead, ResourceTopic, "a"}, false},
		{"type is part of the resource", rules, Request{alice, "h", OpRead, ResourceGroup, "a"}, false},
	}
	for _, c := range cases {
		if got := st.Authorize(c.rules, c.r); got != c.want {
			t.Errorf("%s: Authorize(%+v) = %v, want %v", c.name, c.r, got, c.want)
		}
	}
}

func TestAnyAllowed(t *testing.T) {
	rules := &Rules{}
	st := NewState(map[Resource][]Entry{lit(ResourceTopic, "a"): {allow("User:alice", "*", OpWrite)}})
	if !st.AnyAllowed(rules, "User:alice", "h", OpWrite, ResourceTopic) {
		t.Error("alice may write topic a, so some topic")
	}
	if st.AnyAllowed(rules, "User:bob", "h", OpWrite, ResourceTopic) {
		t.Error("bob may write no topic")
	}
	st = st.With(map[Resource][]Entry{lit(ResourceTopic, Wildcard): {deny("User:alice", "*", OpWrite)}})
	if st.AnyAllowed(rules, "User:alice", "h", OpWrite, ResourceTopic) {
		t.Error("a DENY on every topic leaves none")
	}
}
