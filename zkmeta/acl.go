package zkmeta

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// ACLs in Kafka 3.9's layout (ZkAclStore, ZkAclChangeStore):
//
//	/kafka-acl/<Type>/<name>                          literal patterns
//	/kafka-acl-extended/prefixed/<Type>/<name>        prefixed patterns
//	/kafka-acl-changes/acl_changes_<10 digits>        "TOPIC:<name>" (a literal resource changed)
//	/kafka-acl-extended-changes/acl_changes_<...>     {"version":1,"resourceType":"TOPIC","name":"<name>","patternType":"PREFIXED"}
//
// <Type> is Topic, Group, Cluster, TransactionalId, DelegationToken or
// User; each resource znode holds its entries' JSON
// ({"acls":[...],"version":1}), which this package treats as opaque
// bytes (actors/acl encodes it). A resource's znode is changed by
// compare-and-set on its version, so brokers changing one resource at
// once both land; every change is followed by a notification that all
// brokers watch.
const (
	PathACL                = "/kafka-acl"
	PathACLExtended        = "/kafka-acl-extended/prefixed"
	PathACLChanges         = "/kafka-acl-changes"
	PathACLExtendedChanges = "/kafka-acl-extended-changes"
	ACLChangePrefix        = "acl_changes_"
)

// ACLResource names one resource pattern's znode: Type as in the path
// ("Topic"), its name, and whether the pattern is PREFIXED (else
// LITERAL).
type ACLResource struct {
	Type     string
	Name     string
	Prefixed bool
}

// Path is the resource's znode.
func (r ACLResource) Path() string {
	root := PathACL
	if r.Prefixed {
		root = PathACLExtended
	}
	return root + "/" + r.Type + "/" + r.Name
}

// ACLResources lists every resource with a znode, literal and prefixed.
func (c *Client) ACLResources() ([]ACLResource, error) {
	var out []ACLResource
	for _, prefixed := range []bool{false, true} {
		root := PathACL
		if prefixed {
			root = PathACLExtended
		}
		types, err := c.children(root)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, typ := range types {
			names, err := c.children(root + "/" + typ)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return nil, err
			}
			for _, n := range names {
				out = append(out, ACLResource{Type: typ, Name: n, Prefixed: prefixed})
			}
		}
	}
	return out, nil
}

// ACL reads a resource's znode; a missing one is nil data.
func (c *Client) ACL(r ACLResource) ([]byte, error) {
	data, _, err := c.get(r.Path())
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return data, err
}

// UpdateACL changes a resource's znode by compare-and-set: change gets
// the current data (nil: none) and returns the new data (nil: delete
// the znode), retried until no other writer came in between; then the
// change notification is written. It returns the data stored.
func (c *Client) UpdateACL(r ACLResource, change func(old []byte) []byte) ([]byte, error) {
	p := r.Path()
	for {
		old, st, err := c.get(p)
		exists := err == nil
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, err
		}
		if !exists {
			old = nil
		}
		next := change(old)
		switch {
		case next == nil && !exists:
		case next == nil:
			err = c.delete(p, st.Version)
		case exists:
			_, err = c.set(p, next, st.Version)
		default:
			err = c.createRecursive(p, next, true)
		}
		if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrNodeExists) {
			continue // another broker changed it: read again
		}
		if err != nil {
			return nil, err
		}
		return next, c.createACLChange(r)
	}
}

// EncodeACLChange is a change notification's data: Kafka's literal form
// ("TOPIC:name", the resource type's enum name) or, for prefixed
// patterns, its extended JSON.
func EncodeACLChange(r ACLResource) []byte {
	typ := strings.ToUpper(enumName(r.Type))
	if !r.Prefixed {
		return []byte(typ + ":" + r.Name)
	}
	return object([]field{{"version", jInt(1)}, {"resourceType", jStr(typ)}, {"name", jStr(r.Name)}, {"patternType", jStr("PREFIXED")}})
}

// ErrBadACLChange marks a notification that cannot be read: the
// watchers skip it (no retry can fix it).
var ErrBadACLChange = errors.New("zkmeta: malformed ACL change notification")

// DecodeACLChange reads a notification of either store; the resource
// type comes back as the paths spell it ("Topic").
func DecodeACLChange(extended bool, data []byte) (ACLResource, error) {
	if !extended {
		typ, name, ok := strings.Cut(string(data), ":")
		if !ok {
			return ACLResource{}, fmt.Errorf("%w: %q: want ResourceType:name", ErrBadACLChange, truncate(data))
		}
		t, ok := pathTypeName(typ)
		if !ok {
			return ACLResource{}, fmt.Errorf("%w: %q: unknown resource type", ErrBadACLChange, truncate(data))
		}
		return ACLResource{Type: t, Name: name}, nil
	}
	var j struct {
		Version      int    `json:"version"`
		ResourceType string `json:"resourceType"`
		Name         string `json:"name"`
		PatternType  string `json:"patternType"`
	}
	if err := decodeJSON("ACL change", data, &j); err != nil {
		return ACLResource{}, fmt.Errorf("%w: %w", ErrBadACLChange, err)
	}
	t, ok := pathTypeName(j.ResourceType)
	if !ok || j.Version > 1 || !strings.EqualFold(j.PatternType, "PREFIXED") && !strings.EqualFold(j.PatternType, "LITERAL") {
		return ACLResource{}, fmt.Errorf("%w: %q: unsupported", ErrBadACLChange, truncate(data))
	}
	return ACLResource{Type: t, Name: j.Name, Prefixed: strings.EqualFold(j.PatternType, "PREFIXED")}, nil
}

// aclTypes are the resource types' path names.
var aclTypes = []string{"Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"}

// pathTypeName finds a resource type's path name from any spelling of
// it ("TOPIC", "Topic", "TRANSACTIONAL_ID").
func pathTypeName(s string) (string, bool) {
	s = strings.ReplaceAll(s, "_", "")
	i := slices.IndexFunc(aclTypes, func(t string) bool { return strings.EqualFold(t, s) })
	if i < 0 {
		return "", false
	}
	return aclTypes[i], true
}

// enumName is a path name's Java enum spelling: TransactionalId is
// TRANSACTIONAL_ID.
func enumName(pathName string) string {
	var b strings.Builder
	for i, r := range pathName {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

func aclChangePath(extended bool) string {
	if extended {
		return PathACLExtendedChanges
	}
	return PathACLChanges
}

func (c *Client) createACLChange(r ACLResource) error {
	dir := aclChangePath(r.Prefixed)
	if err := c.createRecursive(dir, nil, false); err != nil {
		return err
	}
	_, err := c.create(dir+"/"+ACLChangePrefix, EncodeACLChange(r), zk.FlagSequence)
	return err
}

// WatchACLChanges lists one store's notifications (sorted, oldest first)
// and arms a one-shot watch on the list.
func (c *Client) WatchACLChanges(extended bool) (seqNodes []string, changed <-chan struct{}, err error) {
	dir := aclChangePath(extended)
	names, ch, err := c.childrenW(dir)
	if errors.Is(err, zk.ErrNoNode) {
		if err := c.createRecursive(dir, nil, false); err != nil {
			return nil, nil, err
		}
		names, ch, err = c.childrenW(dir)
	}
	if err != nil {
		return nil, nil, err
	}
	out := slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, ACLChangePrefix) })
	slices.Sort(out)
	return out, ch, nil
}

// ACLChange reads one notification WatchACLChanges listed, with its
// creation time (its znode's ctime), by which brokers purge old ones.
func (c *Client) ACLChange(extended bool, node string) (ACLResource, time.Time, error) {
	data, st, err := c.get(aclChangePath(extended) + "/" + node)
	if err != nil {
		return ACLResource{}, time.Time{}, err
	}
	r, err := DecodeACLChange(extended, data)
	return r, time.UnixMilli(st.Ctime), err
}

// DeleteACLChange removes a notification (Kafka's brokers purge those
// older than 15 minutes); a missing one is no error.
func (c *Client) DeleteACLChange(extended bool, node string) error {
	err := c.delete(aclChangePath(extended)+"/"+node, -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}
