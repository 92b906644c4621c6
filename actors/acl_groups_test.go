package actors

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

func groupACL(name, principal string, op kmsg.ACLOperation) kmsg.CreateACLsRequestCreation {
	return aclOf(kmsg.ACLResourceTypeGroup, name, kmsg.ACLResourcePatternTypeLiteral, principal, "*", op, kmsg.ACLPermissionTypeAllow)
}

func TestGroupAndCoordinatorAPIsAuthorized(t *testing.T) {
	b := startACLBroker(t, groupACL("g", alice, kmsg.ACLOperationRead), topicACL("t1", alice, kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow))

	find := kmsg.NewPtrFindCoordinatorRequest()
	find.Version, find.CoordinatorType, find.CoordinatorKeys = 4, 0, []string{"g", "other"}
	codes := map[string]kerr.Code{}
	for _, c := range callAs(t, b, alice, find).(*kmsg.FindCoordinatorResponse).Coordinators {
		codes[c.Key] = kerr.Code(c.ErrorCode)
	}
	if codes["g"] != kerr.None || codes["other"] != kerr.GroupAuthorizationFailed {
		t.Errorf("alice finds the coordinators of g and other: %v", codes)
	}

	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 9, "other", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	if r := callAs(t, b, alice, join).(*kmsg.JoinGroupResponse); kerr.Code(r.ErrorCode) != kerr.GroupAuthorizationFailed {
		t.Errorf("alice joins other: %v", kerr.Code(r.ErrorCode))
	}

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation = 8, "g", -1
	for _, topic := range []string{"t1", "t2"} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 0}}
		commit.Topics = append(commit.Topics, rt)
	}
	codes = map[string]kerr.Code{}
	for _, rt := range callAs(t, b, alice, commit).(*kmsg.OffsetCommitResponse).Topics {
		codes[rt.Topic] = kerr.Code(rt.Partitions[0].ErrorCode)
	}
	// alice may WRITE t1, which does not imply READ: both topics are refused.
	if codes["t1"] != kerr.TopicAuthorizationFailed || codes["t2"] != kerr.TopicAuthorizationFailed || len(codes) != 2 {
		t.Errorf("alice commits g's offsets of t1 and t2: %v", codes)
	}

	list := kmsg.NewPtrListGroupsRequest()
	list.Version = 4
	if r := callAs(t, b, alice, list).(*kmsg.ListGroupsResponse); r.ErrorCode != 0 {
		t.Errorf("alice lists groups: %v", kerr.Code(r.ErrorCode))
	}

	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version, init.ProducerID, init.ProducerEpoch = 4, -1, -1
	if r := callAs(t, b, alice, init).(*kmsg.InitProducerIDResponse); r.ErrorCode != 0 {
		t.Errorf("alice, who may write t1, inits an idempotent producer: %v", kerr.Code(r.ErrorCode))
	}
	if r := callAs(t, b, bob, init).(*kmsg.InitProducerIDResponse); kerr.Code(r.ErrorCode) != kerr.ClusterAuthorizationFailed {
		t.Errorf("bob, who may write nothing, inits an idempotent producer: %v", kerr.Code(r.ErrorCode))
	}
	txn := "tx"
	init.TransactionalID = &txn
	if r := callAs(t, b, alice, init).(*kmsg.InitProducerIDResponse); kerr.Code(r.ErrorCode) != kerr.TransactionalIDAuthorizationFailed {
		t.Errorf("alice inits transactional id tx: %v", kerr.Code(r.ErrorCode))
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.Version, end.TransactionalID = 3, txn
	if r := callAs(t, b, alice, end).(*kmsg.EndTxnResponse); kerr.Code(r.ErrorCode) != kerr.TransactionalIDAuthorizationFailed {
		t.Errorf("alice ends transaction tx: %v", kerr.Code(r.ErrorCode))
	}
	leader := kmsg.NewPtrLeaderAndISRRequest()
	leader.Version = 5
	if r := callAs(t, b, alice, leader).(*kmsg.LeaderAndISRResponse); kerr.Code(r.ErrorCode) != kerr.ClusterAuthorizationFailed {
		t.Errorf("alice sends LeaderAndIsr: %v", kerr.Code(r.ErrorCode))
	}
}
