package group

import (
	"testing"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestErrorResponseEveryGroupAPIAndVersion(t *testing.T) {
	reqs := []kmsg.Request{
		&kmsg.JoinGroupRequest{MemberID: "m"}, &kmsg.SyncGroupRequest{}, &kmsg.HeartbeatRequest{},
		&kmsg.LeaveGroupRequest{},
		&kmsg.OffsetCommitRequest{Topics: []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 1}}}}},
		&kmsg.OffsetFetchRequest{
			Topics: []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}},
			Groups: []kmsg.OffsetFetchRequestGroup{{Group: "a"}, {Group: "b"}},
		},
		&kmsg.OffsetDeleteRequest{}, &kmsg.DescribeGroupsRequest{Groups: []string{"a", "b"}},
		&kmsg.ListGroupsRequest{}, &kmsg.DeleteGroupsRequest{Groups: []string{"a"}},
	}
	for _, req := range reqs {
		for v := int16(0); v <= req.MaxVersion(); v++ {
			req.SetVersion(v)
			r := ErrorResponse(req, kerr.NotCoordinator)
			if r == nil || r.Key() != req.Key() || r.GetVersion() != v {
				t.Fatalf("%T v%d: %#v", req, v, r)
			}
			checkEncodes(t, r)
			if !carries(r, kerr.NotCoordinator) {
				t.Fatalf("%T v%d does not carry the error: %#v", req, v, r)
			}
			lr := LoadInProgressResponse(req)
			_, hb := req.(*kmsg.HeartbeatRequest)
			if carries(lr, kerr.CoordinatorLoadInProgress) == hb {
				t.Fatalf("%T v%d load in progress: %#v", req, v, lr)
			}
		}
	}
	if ErrorResponse(kmsg.NewPtrProduceRequest(), kerr.NotCoordinator) != nil {
		t.Fatalf("not a group API")
	}
}

// carries reports whether code appears where the API puts errors.
func carries(r kmsg.Response, code kerr.Code) bool {
	c := int16(code)
	switch r := r.(type) {
	case *kmsg.OffsetCommitResponse:
		return r.Topics[0].Partitions[0].ErrorCode == c
	case *kmsg.OffsetFetchResponse:
		if r.Version >= 8 {
			return len(r.Groups) == 2 && r.Groups[1].ErrorCode == c
		}
		if r.Version >= 2 {
			return r.ErrorCode == c
		}
		return len(r.Topics) == 1 && r.Topics[0].Partitions[1].ErrorCode == c
	case *kmsg.DescribeGroupsResponse:
		return len(r.Groups) == 2 && r.Groups[1].ErrorCode == c
	case *kmsg.DeleteGroupsResponse:
		return r.Groups[0].ErrorCode == c
	}
	return errorCode(r) == code
}
