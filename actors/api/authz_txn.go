package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// gateTxn applies Kafka's rules to the transaction APIs: a producer's
// calls need WRITE on their transactional id (and AddPartitionsToTxn
// WRITE on each topic, AddOffsetsToTxn READ on the group); the
// broker-to-broker ones (AddPartitionsToTxn v4+, WriteTxnMarkers)
// CLUSTER_ACTION; DescribeTransactions and ListTransactions answer only
// the ids the client may DESCRIBE.
func gateTxn(s *Services, req *wire.Request) bool {
	txnOK := func(id string) bool { return authorized(s, req, acl.OpWrite, acl.ResourceTransactionalID, id) }
	switch body := req.Body.(type) {
	case *kmsg.AddPartitionsToTxnRequest:
		if body.Version >= 4 {
			return gateClusterOp(acl.OpClusterAction)(s, req)
		}
		if !txnOK(body.TransactionalID) {
			env.Reply(req, addPartitionsError(body, func(string) kerr.Code { return kerr.TransactionalIDAuthorizationFailed }))
			return true
		}
		denied := map[string]bool{}
		for _, t := range body.Topics {
			if !authorized(s, req, acl.OpWrite, acl.ResourceTopic, t.Topic) {
				denied[t.Topic] = true
			}
		}
		if len(denied) == 0 {
			return false
		}
		env.Reply(req, addPartitionsError(body, func(topic string) kerr.Code {
			if denied[topic] {
				return kerr.TopicAuthorizationFailed
			}
			return kerr.OperationNotAttempted
		}))
		return true
	case *kmsg.AddOffsetsToTxnRequest:
		code := kerr.None
		if !txnOK(body.TransactionalID) {
			code = kerr.TransactionalIDAuthorizationFailed
		} else if !authorized(s, req, acl.OpRead, acl.ResourceGroup, body.Group) {
			code = kerr.GroupAuthorizationFailed
		}
		if code == kerr.None {
			return false
		}
		env.Reply(req, topLevelError(body, code))
		return true
	case *kmsg.EndTxnRequest:
		if txnOK(body.TransactionalID) {
			return false
		}
		env.Reply(req, topLevelError(body, kerr.TransactionalIDAuthorizationFailed))
		return true
	case *kmsg.WriteTxnMarkersRequest:
		if clusterAuthorized(s, req, acl.OpClusterAction) {
			return false
		}
		resp := body.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
		for _, m := range body.Markers {
			rm := kmsg.NewWriteTxnMarkersResponseMarker()
			rm.ProducerID = m.ProducerID
			for _, t := range m.Topics {
				rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
					rp.Partition, rp.ErrorCode = p, int16(kerr.ClusterAuthorizationFailed)
					rt.Partitions = append(rt.Partitions, rp)
				}
				rm.Topics = append(rm.Topics, rt)
			}
			resp.Markers = append(resp.Markers, rm)
		}
		env.Reply(req, resp)
		return true
	case *kmsg.DescribeTransactionsRequest:
		kept, denied := splitBy(body.TransactionalIDs, func(id *string) bool {
			return authorized(s, req, acl.OpDescribe, acl.ResourceTransactionalID, *id)
		})
		if len(denied) == 0 {
			return false
		}
		body.TransactionalIDs = kept
		amendReply(req, func(r kmsg.Response) {
			resp := r.(*kmsg.DescribeTransactionsResponse)
			for _, id := range denied {
				st := kmsg.NewDescribeTransactionsResponseTransactionState()
				st.TransactionalID, st.ErrorCode, st.ProducerID, st.ProducerEpoch = id, int16(kerr.TransactionalIDAuthorizationFailed), -1, -1
				resp.TransactionStates = append(resp.TransactionStates, st)
			}
		})
	case *kmsg.ListTransactionsRequest:
		a := s.Env.Auth
		amendReply(req, func(r kmsg.Response) {
			resp := r.(*kmsg.ListTransactionsResponse)
			resp.TransactionStates, _ = splitBy(resp.TransactionStates, func(t *kmsg.ListTransactionsResponseTransactionState) bool {
				return a.Allowed(req.Session.Principal(), req.ClientAddr, acl.OpDescribe, acl.ResourceTransactionalID, t.TransactionalID)
			})
		})
	}
	return false
}

// addPartitionsError answers every partition of an AddPartitionsToTxn
// (v0-3) with the code its topic gets.
func addPartitionsError(body *kmsg.AddPartitionsToTxnRequest, codeOf func(topic string) kerr.Code) *kmsg.AddPartitionsToTxnResponse {
	resp := body.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, t := range body.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, int16(codeOf(t.Topic))
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
