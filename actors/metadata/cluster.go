package metadata

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// DescribeCluster handles DescribeCluster (v0-1): this broker is the whole
// cluster and its controller. The cluster's authorized operations are
// filled when the request asks for them.
func (s *State) DescribeCluster(req *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterAuthorizedOperations = authorizedOperationsUnset
	resp.EndpointType = req.EndpointType
	if req.Version >= 1 && req.EndpointType != 1 {
		// 1 is brokers; 2 (controllers) is asked of controllers only.
		resp.ErrorCode = kerr.MismatchedEndpointType.Int16()
		resp.ErrorMessage = str("This endpoint serves brokers (endpoint type 1).")
		return resp
	}
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = authorizedOperations(resourceCluster)
	}
	resp.ClusterID = s.snap.ClusterID
	resp.ControllerID = s.snap.BrokerID
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port, b.Rack = s.snap.BrokerID, s.endpoint.Host, s.endpoint.Port, s.rack()
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{b}
	return resp
}

// LogDirPartitions lists the partitions a DescribeLogDirs request asks
// about (every partition for a null topic list) that exist.
func (s *State) LogDirPartitions(req *kmsg.DescribeLogDirsRequest) []PartitionRef {
	var out []PartitionRef
	add := func(t *Topic, want func(int32) bool) {
		for _, p := range t.Partitions {
			if want(p.Index) {
				out = append(out, PartitionRef{Topic: t.Name, ID: t.ID, Partition: p.Index, Dir: p.Dir})
			}
		}
	}
	if req.Topics == nil {
		for i := range s.snap.Topics {
			add(&s.snap.Topics[i], func(int32) bool { return true })
		}
		return out
	}
	for _, rt := range req.Topics {
		if t, ok := s.byName[rt.Topic]; ok {
			add(t, func(p int32) bool { return slices.Contains(rt.Partitions, p) })
		}
	}
	return out
}

// LogDirs is the configured data directories.
func (s *State) LogDirs() []string { return s.broker.LogDirs }

// DirUsage is a data directory's filesystem capacity (DescribeLogDirs v4).
type DirUsage struct {
	TotalBytes, UsableBytes int64
	Err                     error // the directory cannot be read
}

// BuildDescribeLogDirs assembles a DescribeLogDirs response from the
// partition sizes the partition actors reported (a missing size reports
// as 0) and each directory's usage.
func BuildDescribeLogDirs(req *kmsg.DescribeLogDirsRequest, dirs []string, parts []PartitionRef, sizes []int64, usage map[string]DirUsage) *kmsg.DescribeLogDirsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	for _, dir := range dirs {
		d := kmsg.NewDescribeLogDirsResponseDir()
		d.Dir = dir
		u := usage[dir]
		d.TotalBytes, d.UsableBytes = -1, -1
		if u.Err != nil {
			d.ErrorCode = kerr.KafkaStorageError.Int16()
		} else if u.TotalBytes > 0 {
			d.TotalBytes, d.UsableBytes = u.TotalBytes, u.UsableBytes
		}
		byTopic := make(map[string]int)
		for i, p := range parts {
			if p.Dir != dir {
				continue
			}
			at, ok := byTopic[p.Topic]
			if !ok {
				t := kmsg.NewDescribeLogDirsResponseDirTopic()
				t.Topic = p.Topic
				d.Topics = append(d.Topics, t)
				at = len(d.Topics) - 1
				byTopic[p.Topic] = at
			}
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition = p.Partition
			if i < len(sizes) {
				dp.Size = sizes[i]
			}
			d.Topics[at].Partitions = append(d.Topics[at].Partitions, dp)
		}
		resp.Dirs = append(resp.Dirs, d)
	}
	return resp
}
