package fetch

import (
	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/wire"
)

// fetchAuth decides, for one fetch, which partitions the client may
// read: a consumer needs READ on each topic, a follower (replica id set)
// CLUSTER_ACTION on the cluster for all of them, as in Kafka. Each topic
// is decided once per request.
type fetchAuth struct {
	a        *acl.Authorizer
	req      *wire.Request
	follower bool
	cluster  bool // a follower's CLUSTER_ACTION, decided up front
	topics   map[string]bool
}

// newFetchAuth is nil without an authorizer: the fetch path then pays one
// nil check per partition.
func newFetchAuth(a *acl.Authorizer, req *wire.Request, replicaID int32) *fetchAuth {
	if a == nil {
		return nil
	}
	f := &fetchAuth{a: a, req: req, follower: replicaID >= 0}
	if f.follower {
		f.cluster = a.Authorize(req.Session.Principal(), req.ClientAddr, acl.OpClusterAction, acl.ResourceCluster, acl.ClusterName)
	}
	return f
}

// denied reports whether the partition's topic may not be read. A topic
// named by an id this broker does not know is left to the existence
// check (UNKNOWN_TOPIC_ID): there is no name to decide on.
func (f *fetchAuth) denied(byID bool, name string, tr *routing.Topic) bool {
	if f.follower {
		return !f.cluster
	}
	if byID {
		if tr == nil {
			return false
		}
		name = tr.Name
	}
	ok, seen := f.topics[name]
	if !seen {
		if f.topics == nil {
			f.topics = make(map[string]bool)
		}
		ok = f.a.Authorize(f.req.Session.Principal(), f.req.ClientAddr, acl.OpRead, acl.ResourceTopic, name)
		f.topics[name] = ok
	}
	return !ok
}
