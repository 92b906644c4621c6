package acl

import "testing"

func ptr(s string) *string { return &s }

func TestFilterMatchesResource(t *testing.T) {
	foo, wild := lit(ResourceTopic, "foo"), lit(ResourceTopic, Wildcard)
	pre := Resource{Type: ResourceTopic, Name: "fo", Pattern: PatternPrefixed}
	other := Resource{Type: ResourceTopic, Name: "bar", Pattern: PatternPrefixed}
	cases := []struct {
		name string
		f    Filter
		r    Resource
		want bool
	}{
		{"any matches literal", Filter{Type: ResourceAny, Pattern: PatternAny}, foo, true},
		{"any with name", Filter{Type: ResourceTopic, Pattern: PatternAny, Name: ptr("fo")}, pre, true},
		{"any with other name", Filter{Type: ResourceTopic, Pattern: PatternAny, Name: ptr("foo")}, pre, false},
		{"literal only literal", Filter{Type: ResourceTopic, Pattern: PatternLiteral}, pre, false},
		{"prefixed only prefixed", Filter{Type: ResourceTopic, Pattern: PatternPrefixed, Name: ptr("fo")}, pre, true},
		{"match: literal name", Filter{Type: ResourceTopic, Pattern: PatternMatch, Name: ptr("foo")}, foo, true},
		{"match: wildcard", Filter{Type: ResourceTopic, Pattern: PatternMatch, Name: ptr("foo")}, wild, true},
		{"match: prefix", Filter{Type: ResourceTopic, Pattern: PatternMatch, Name: ptr("foo")}, pre, true},
		{"match: other prefix", Filter{Type: ResourceTopic, Pattern: PatternMatch, Name: ptr("foo")}, other, false},
		{"type differs", Filter{Type: ResourceGroup, Pattern: PatternAny}, foo, false},
	}
	for _, c := range cases {
		if got := c.f.MatchesResource(c.r); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFilterValidate(t *testing.T) {
	good := Filter{Type: ResourceAny, Pattern: PatternAny, Op: OpAny, Perm: PermAny}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{
		{Type: ResourceUnknown, Pattern: PatternAny, Op: OpAny, Perm: PermAny},
		{Type: ResourceAny, Pattern: PatternUnknown, Op: OpAny, Perm: PermAny},
		{Type: ResourceAny, Pattern: PatternAny, Op: OpUnknown, Perm: PermAny},
		{Type: ResourceAny, Pattern: PatternAny, Op: OpAny, Perm: 9},
		{Type: 42, Pattern: PatternAny, Op: OpAny, Perm: PermAny},
	} {
		if f.Validate() == nil {
			t.Errorf("%+v: want an error", f)
		}
	}
}

func TestBindingValidate(t *testing.T) {
	ok := Binding{Resource: lit(ResourceTopic, "a"), Entry: allow("User:alice", "*", OpRead)}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []Binding{
		{Resource: Resource{Type: ResourceAny, Name: "a", Pattern: PatternLiteral}, Entry: ok.Entry},
		{Resource: Resource{Type: ResourceTopic, Name: "a", Pattern: PatternMatch}, Entry: ok.Entry},
		{Resource: lit(ResourceTopic, ""), Entry: ok.Entry},
		{Resource: lit(ResourceCluster, "c"), Entry: ok.Entry},
		{Resource: ok.Resource, Entry: allow("alice", "*", OpRead)},
		{Resource: ok.Resource, Entry: allow("User:alice", "*", OpAny)},
		{Resource: ok.Resource, Entry: Entry{Principal: "User:a", Host: "*", Op: OpRead, Perm: PermAny}},
	}
	for _, b := range bad {
		if b.Validate() == nil {
			t.Errorf("%+v: want an error", b)
		}
	}
}
