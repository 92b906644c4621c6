package metadata

import (
	"math/bits"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// opSet lists the AclOperation codes set in a bitfield.
func opSet(field int32) []int {
	var out []int
	for b := uint32(field); b != 0; b &= b - 1 {
		out = append(out, bits.TrailingZeros32(b))
	}
	return out
}

func TestAuthorizedOperationsWhenAsked(t *testing.T) {
	s, _ := newState(t)
	s.CreateTopics(createReq(topicReq("t", 1, 1)), now)
	// Kafka without an authorizer: a topic's 8 operations (READ, WRITE,
	// CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS) and
	// the cluster's 7 (CREATE, ALTER, DESCRIBE, CLUSTER_ACTION,
	// DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE).
	const topicOps = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	const clusterOps = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12

	for _, all := range []bool{false, true} {
		req := metadataReq(10, false, "t", "missing")
		if all {
			req.Topics = nil
		}
		req.IncludeTopicAuthorizedOperations, req.IncludeClusterAuthorizedOperations = true, true
		resp, _ := s.Metadata(req, now)
		if resp.AuthorizedOperations != clusterOps {
			t.Errorf("all=%v: cluster operations %v, want %v", all, opSet(resp.AuthorizedOperations), opSet(clusterOps))
		}
		for _, e := range resp.Topics {
			if e.AuthorizedOperations != topicOps {
				t.Errorf("all=%v: topic %s operations %v, want %v", all, deref(e.Topic), opSet(e.AuthorizedOperations), opSet(topicOps))
			}
		}
	}

	// Not asked: INT32_MIN; and asking does not leak into the shared cache.
	resp, _ := s.Metadata(metadataReq(10, false, "t"), now)
	if resp.AuthorizedOperations != authorizedOperationsUnset || resp.Topics[0].AuthorizedOperations != authorizedOperationsUnset {
		t.Errorf("not asked: cluster %d, topic %d, want %d", resp.AuthorizedOperations, resp.Topics[0].AuthorizedOperations, authorizedOperationsUnset)
	}
	// v11+ has no cluster operations (they moved to DescribeCluster).
	req := metadataReq(12, false, "t")
	req.IncludeTopicAuthorizedOperations, req.IncludeClusterAuthorizedOperations = true, true
	if resp, _ = s.Metadata(req, now); resp.AuthorizedOperations != authorizedOperationsUnset || resp.Topics[0].AuthorizedOperations != topicOps {
		t.Errorf("v12: cluster %d, topic %v", resp.AuthorizedOperations, opSet(resp.Topics[0].AuthorizedOperations))
	}

	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.SetVersion(1)
	dc.EndpointType = 1
	if got := s.DescribeCluster(dc).ClusterAuthorizedOperations; got != authorizedOperationsUnset {
		t.Errorf("DescribeCluster not asked: %d", got)
	}
	dc.IncludeClusterAuthorizedOperations = true
	if got := s.DescribeCluster(dc).ClusterAuthorizedOperations; got != clusterOps {
		t.Errorf("DescribeCluster: %v, want %v", opSet(got), opSet(clusterOps))
	}
}
