package acl

import (
	"errors"
	"strings"
)

// Resource is a resource pattern: a type, a name and how the name
// matches (LITERAL or PREFIXED). It is the key ACLs are stored under.
type Resource struct {
	Type    ResourceType
	Name    string
	Pattern PatternType
}

// Entry is an access control entry: who (principal, host) may or may not
// (permission) do what (operation).
type Entry struct {
	Principal string
	Host      string
	Op        Operation
	Perm      Permission
}

// Binding is one ACL: an entry bound to a resource pattern.
type Binding struct {
	Resource Resource
	Entry    Entry
}

// Validate checks a binding a client asks to create, with Kafka's rules;
// the error's text is what the client is told (INVALID_REQUEST).
func (b Binding) Validate() error {
	r, e := b.Resource, b.Entry
	switch {
	case !r.Type.concrete():
		return errors.New("invalid resource type")
	case r.Pattern != PatternLiteral && r.Pattern != PatternPrefixed:
		return errors.New("invalid pattern type: only LITERAL and PREFIXED bindings can be created")
	case r.Name == "":
		return errors.New("resource name must not be empty")
	case r.Type == ResourceCluster && (r.Name != ClusterName || r.Pattern != PatternLiteral):
		return errors.New("the only valid name for the CLUSTER resource is " + ClusterName)
	case !e.Op.concrete():
		return errors.New("invalid operation")
	case e.Perm != PermAllow && e.Perm != PermDeny:
		return errors.New("invalid permission type")
	case e.Host == "":
		return errors.New("host must not be empty")
	}
	return validPrincipal(e.Principal)
}

// validPrincipal checks "Type:name" with a non-empty type and name.
func validPrincipal(p string) error {
	typ, name, ok := strings.Cut(p, ":")
	if !ok || typ == "" || name == "" {
		return errors.New("invalid principal " + quote(p) + ": expected Type:name, such as User:alice")
	}
	return nil
}

func quote(s string) string { return "\"" + s + "\"" }
