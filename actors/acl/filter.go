package acl

import (
	"errors"
	"strings"
)

// Filter selects bindings, for DescribeAcls and DeleteAcls. An empty
// (nil) name, principal or host matches any; ResourceAny, PatternAny,
// OpAny and PermAny match any; PatternMatch selects the patterns that
// would apply to the named resource (the literal name, the literal
// wildcard and the prefixes of the name).
type Filter struct {
	Type      ResourceType
	Name      *string
	Pattern   PatternType
	Principal *string
	Host      *string
	Op        Operation
	Perm      Permission
}

// Validate rejects filters with an UNKNOWN field (INVALID_REQUEST).
func (f Filter) Validate() error {
	switch {
	case f.Type == ResourceUnknown || f.Type < 0 || f.Type > ResourceUser:
		return errors.New("invalid resource type in filter")
	case f.Pattern == PatternUnknown || f.Pattern < 0 || f.Pattern > PatternPrefixed:
		return errors.New("invalid pattern type in filter")
	case f.Op == OpUnknown || f.Op < 0 || f.Op > OpDescribeTokens:
		return errors.New("invalid operation in filter")
	case f.Perm == PermUnknown || f.Perm < 0 || f.Perm > PermAllow:
		return errors.New("invalid permission type in filter")
	}
	return nil
}

// MatchesResource reports whether the filter selects the pattern r.
func (f Filter) MatchesResource(r Resource) bool {
	if f.Type != ResourceAny && f.Type != r.Type {
		return false
	}
	switch f.Pattern {
	case PatternAny:
		return f.Name == nil || *f.Name == r.Name
	case PatternMatch:
		if f.Name == nil {
			return true
		}
		switch r.Pattern {
		case PatternLiteral:
			return r.Name == *f.Name || r.Name == Wildcard
		case PatternPrefixed:
			return strings.HasPrefix(*f.Name, r.Name)
		}
		return false
	default:
		return f.Pattern == r.Pattern && (f.Name == nil || *f.Name == r.Name)
	}
}

// MatchesEntry reports whether the filter selects the entry e.
func (f Filter) MatchesEntry(e Entry) bool {
	return (f.Principal == nil || *f.Principal == e.Principal) &&
		(f.Host == nil || *f.Host == e.Host) &&
		(f.Op == OpAny || f.Op == e.Op) &&
		(f.Perm == PermAny || f.Perm == e.Perm)
}

// Matches reports whether the filter selects the binding b.
func (f Filter) Matches(b Binding) bool {
	return f.MatchesResource(b.Resource) && f.MatchesEntry(b.Entry)
}
