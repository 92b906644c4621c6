package acl

import "strings"

// Rules are the broker settings the decision depends on.
type Rules struct {
	// SuperUsers (super.users) may do anything.
	SuperUsers map[string]bool
	// AllowIfNoACL (allow.everyone.if.no.acl.found) allows an operation
	// on a resource no ACL applies to.
	AllowIfNoACL bool
}

// Request is one question to the authorizer.
type Request struct {
	Principal string // "User:alice"
	Host      string // the client's IP, without port
	Op        Operation
	Type      ResourceType
	Name      string
}

// Authorize answers r by Kafka's rules (see the package doc).
func (s *State) Authorize(rules *Rules, r Request) bool {
	if rules.SuperUsers[r.Principal] {
		return true
	}
	found, allowed := false, false
	for _, es := range s.applying(r.Type, r.Name) {
		found = true
		for _, e := range es {
			if !e.matches(r.Principal, r.Host) {
				continue
			}
			if e.Perm == PermDeny && (e.Op == r.Op || e.Op == OpAll) {
				return false // a matching DENY wins over any ALLOW
			}
			if e.Perm == PermAllow && implies(e.Op, r.Op) {
				allowed = true
			}
		}
	}
	if !found {
		return rules.AllowIfNoACL
	}
	return allowed
}

// applying lists the entry sets that apply to the resource typ/name: its
// literal name, the literal wildcard, and the prefixes of its name.
func (s *State) applying(typ ResourceType, name string) [][]Entry {
	var out [][]Entry
	if es := s.acls[Resource{Type: typ, Name: name, Pattern: PatternLiteral}]; es != nil {
		out = append(out, es)
	}
	if name != Wildcard {
		if es := s.acls[Resource{Type: typ, Name: Wildcard, Pattern: PatternLiteral}]; es != nil {
			out = append(out, es)
		}
	}
	for _, p := range s.prefixed[typ] {
		if strings.HasPrefix(name, p) {
			out = append(out, s.acls[Resource{Type: typ, Name: p, Pattern: PatternPrefixed}])
		}
	}
	return out
}

// matches reports whether the entry applies to principal at host.
func (e Entry) matches(principal, host string) bool {
	return (e.Principal == principal || e.Principal == WildcardPrincipal && strings.HasPrefix(principal, "User:")) &&
		(e.Host == host || e.Host == Wildcard)
}

// implies reports whether an ALLOW of granted allows op: ALL allows
// everything, READ, WRITE, DELETE and ALTER allow DESCRIBE, and
// ALTER_CONFIGS allows DESCRIBE_CONFIGS.
func implies(granted, op Operation) bool {
	switch {
	case granted == op || granted == OpAll:
		return true
	case op == OpDescribe:
		return granted == OpRead || granted == OpWrite || granted == OpDelete || granted == OpAlter
	case op == OpDescribeConfigs:
		return granted == OpAlterConfigs
	}
	return false
}

// AnyAllowed reports whether principal at host may perform op on some
// resource of type typ: the check Kafka 3.x makes for an idempotent
// producer (WRITE on any topic) when IDEMPOTENT_WRITE on the cluster is
// not granted. It is allowed when an ALLOW for op matches on some
// pattern of the type and no DENY for op matches the literal wildcard
// (which would deny every resource of the type).
func (s *State) AnyAllowed(rules *Rules, principal, host string, op Operation, typ ResourceType) bool {
	if rules.SuperUsers[principal] {
		return true
	}
	for _, e := range s.acls[Resource{Type: typ, Name: Wildcard, Pattern: PatternLiteral}] {
		if e.Perm == PermDeny && e.matches(principal, host) && (e.Op == op || e.Op == OpAll) {
			return false
		}
	}
	any := false
	for r, es := range s.acls {
		if r.Type != typ {
			continue
		}
		any = true
		for _, e := range es {
			if e.Perm == PermAllow && e.matches(principal, host) && implies(e.Op, op) {
				return true
			}
		}
	}
	return !any && rules.AllowIfNoACL
}
