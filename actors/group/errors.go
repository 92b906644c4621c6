package group

import (
	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrorResponse answers a group request with code where the API carries
// it (per partition, per group, or at the top), for the shell's own
// refusals: NOT_COORDINATOR when this broker does not lead the group's
// __consumer_offsets partition, COORDINATOR_LOAD_IN_PROGRESS while it
// loads (see LoadInProgressResponse), COORDINATOR_NOT_AVAILABLE. It
// returns nil for a request that is not a group API.
func ErrorResponse(req kmsg.Request, code kerr.Code) kmsg.Response {
	c := int16(code)
	v := req.GetVersion()
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		return joinError(v, r.MemberID, code)
	case *kmsg.SyncGroupRequest:
		return syncError(v, code)
	case *kmsg.HeartbeatRequest:
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.Version, resp.ErrorCode = v, c
		return resp
	case *kmsg.LeaveGroupRequest:
		resp := kmsg.NewPtrLeaveGroupResponse()
		resp.Version, resp.ErrorCode = v, c
		return resp
	case *kmsg.OffsetCommitRequest:
		return commitResponse(r, func(string, int32) kerr.Code { return code })
	case *kmsg.TxnOffsetCommitRequest:
		return txnCommitResponse(r, func(string, int32) kerr.Code { return code })
	case *kmsg.OffsetFetchRequest:
		resp := kmsg.NewPtrOffsetFetchResponse()
		resp.Version = v
		switch {
		case v >= 8:
			for _, rg := range r.Groups {
				e := kmsg.NewOffsetFetchResponseGroup()
				e.Group, e.ErrorCode = rg.Group, c
				resp.Groups = append(resp.Groups, e)
			}
		case v >= 2:
			resp.ErrorCode = c
		default:
			// v0-v1 have no top-level error: every partition carries it.
			for _, rt := range r.Topics {
				t := kmsg.NewOffsetFetchResponseTopic()
				t.Topic = rt.Topic
				for _, p := range rt.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, c
					rp.Metadata = strPtr("")
					t.Partitions = append(t.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, t)
			}
		}
		return resp
	case *kmsg.OffsetDeleteRequest:
		resp := kmsg.NewPtrOffsetDeleteResponse()
		resp.Version, resp.ErrorCode = v, c
		return resp
	case *kmsg.DescribeGroupsRequest:
		resp := kmsg.NewPtrDescribeGroupsResponse()
		resp.Version = v
		for _, id := range r.Groups {
			e := kmsg.NewDescribeGroupsResponseGroup()
			e.Group, e.ErrorCode = id, c
			resp.Groups = append(resp.Groups, e)
		}
		return resp
	case *kmsg.ListGroupsRequest:
		resp := kmsg.NewPtrListGroupsResponse()
		resp.Version, resp.ErrorCode = v, c
		return resp
	case *kmsg.ConsumerGroupHeartbeatRequest:
		return heartbeatError(v, code, "")
	case *kmsg.ConsumerGroupDescribeRequest:
		resp := kmsg.NewPtrConsumerGroupDescribeResponse()
		resp.Version = v
		for _, id := range r.Groups {
			resp.Groups = append(resp.Groups, kmsg.ConsumerGroupDescribeResponseGroup{Group: id, ErrorCode: c, AuthorizedOperations: -2147483648})
		}
		return resp
	case *kmsg.DeleteGroupsRequest:
		resp := kmsg.NewPtrDeleteGroupsResponse()
		resp.Version = v
		for _, id := range r.Groups {
			e := kmsg.NewDeleteGroupsResponseGroup()
			e.Group, e.ErrorCode = id, c
			resp.Groups = append(resp.Groups, e)
		}
		return resp
	}
	return nil
}

// LoadInProgressResponse is the answer to a group request while the
// group's __consumer_offsets partition is being loaded:
// COORDINATOR_LOAD_IN_PROGRESS (retriable), except that a Heartbeat is
// answered with no error, as Kafka does, so members do not rejoin
// needlessly after a coordinator move.
func LoadInProgressResponse(req kmsg.Request) kmsg.Response {
	if _, ok := req.(*kmsg.HeartbeatRequest); ok {
		return ErrorResponse(req, kerr.None)
	}
	return ErrorResponse(req, kerr.CoordinatorLoadInProgress)
}
