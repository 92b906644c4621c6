package acl

import (
	"fmt"

	"github.com/samsa-io/samsa/zkmeta"
)

// ZKStore keeps the ACLs in ZooKeeper, in Kafka 3.9's layout (zkmeta's
// acl.go), shared with the other brokers of the cluster, samsa's or
// Kafka's.
type ZKStore struct{ zk *zkmeta.Client }

// NewZKStore keeps the ACLs through zc.
func NewZKStore(zc *zkmeta.Client) *ZKStore { return &ZKStore{zk: zc} }

// zkResource is r's znode name.
func zkResource(r Resource) zkmeta.ACLResource {
	return zkmeta.ACLResource{Type: r.Type.String(), Name: r.Name, Prefixed: r.Pattern == PatternPrefixed}
}

// fromZK is the pattern a znode stands for.
func fromZK(z zkmeta.ACLResource) (Resource, error) {
	typ, ok := ParseResourceType(z.Type)
	if !ok {
		return Resource{}, fmt.Errorf("acl: unknown resource type %q in ZooKeeper", z.Type)
	}
	p := PatternLiteral
	if z.Prefixed {
		p = PatternPrefixed
	}
	return Resource{Type: typ, Name: z.Name, Pattern: p}, nil
}

// Load is Store's: every resource znode. One that cannot be read is an
// error (a broker must not start authorizing with ACLs missing).
func (s *ZKStore) Load() (map[Resource][]Entry, error) {
	zrs, err := s.zk.ACLResources()
	if err != nil {
		return nil, err
	}
	out := make(map[Resource][]Entry, len(zrs))
	for _, zr := range zrs {
		r, es, err := s.read(zr)
		if err != nil {
			return nil, err
		}
		if len(es) > 0 {
			out[r] = es
		}
	}
	return out, nil
}

// read reads one resource's entries.
func (s *ZKStore) read(zr zkmeta.ACLResource) (Resource, []Entry, error) {
	r, err := fromZK(zr)
	if err != nil {
		return Resource{}, nil, err
	}
	data, err := s.zk.ACL(zr)
	if err != nil {
		return Resource{}, nil, err
	}
	es, err := DecodeEntries(data)
	if err != nil {
		return Resource{}, nil, fmt.Errorf("acl: %s: %w", zr.Path(), err)
	}
	return r, es, nil
}

// Update is Store's: each resource by compare-and-set on its znode,
// followed by Kafka's change notification.
func (s *ZKStore) Update(changes map[Resource]func([]Entry) []Entry) (map[Resource][]Entry, error) {
	out := make(map[Resource][]Entry, len(changes))
	for r, change := range changes {
		var decodeErr error
		var stored []Entry
		_, err := s.zk.UpdateACL(zkResource(r), func(old []byte) []byte {
			es, err := DecodeEntries(old)
			if err != nil {
				decodeErr = err
				return old // leave a znode we cannot read as it is
			}
			stored = change(es)
			if len(stored) == 0 {
				return nil
			}
			return EncodeEntries(stored)
		})
		if err == nil {
			err = decodeErr
		}
		if err != nil {
			return out, err
		}
		out[r] = stored
	}
	return out, nil
}
