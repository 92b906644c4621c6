package actors

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

const (
	admin = "User:admin"
	alice = "User:alice"
	bob   = "User:bob"
)

// startACLBroker starts a broker with ACLs on and User:admin a super
// user, with topics t1 and t2 and the ACLs given (created by admin).
func startACLBroker(t *testing.T, creations ...kmsg.CreateACLsRequestCreation) *Broker {
	t.Helper()
	b := startBrokerWith(t, t.TempDir(), map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users": admin})
	for _, name := range []string{"t1", "t2"} {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		req.Version, req.Topics = 7, []kmsg.CreateTopicsRequestTopic{rt}
		if resp := callAs(t, b, admin, req).(*kmsg.CreateTopicsResponse); resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("admin creates %s: %v", name, kerr.Code(resp.Topics[0].ErrorCode))
		}
	}
	if len(creations) > 0 {
		req := kmsg.NewPtrCreateACLsRequest()
		req.Version, req.Creations = 3, creations
		for i, r := range callAs(t, b, admin, req).(*kmsg.CreateACLsResponse).Results {
			if r.ErrorCode != 0 {
				t.Fatalf("admin creates ACL %d: %v %v", i, kerr.Code(r.ErrorCode), msgOf(r.ErrorMessage))
			}
		}
	}
	return b
}

func aclOf(typ kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal, host string,
	op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = typ, name, pattern
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, host, op, perm
	return c
}

func topicACL(name, principal string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	return aclOf(kmsg.ACLResourceTypeTopic, name, kmsg.ACLResourcePatternTypeLiteral, principal, "*", op, perm)
}

func produceAs(t *testing.T, b *Broker, principal, topic string) kerr.Code {
	t.Helper()
	resp := callAs(t, b, principal, produceRequest9(-1, topic, 0, batchtest.Plain(1, 1000))).(*kmsg.ProduceResponse)
	return kerr.Code(resp.Topics[0].Partitions[0].ErrorCode)
}

func TestProduceAuthorizedByPrincipal(t *testing.T) {
	allow, deny := kmsg.ACLPermissionTypeAllow, kmsg.ACLPermissionTypeDeny
	b := startACLBroker(t,
		topicACL("t1", alice, kmsg.ACLOperationWrite, allow),
		topicACL("t1", bob, kmsg.ACLOperationAll, allow),
		aclOf(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypePrefixed, bob, "127.0.0.1", kmsg.ACLOperationWrite, deny),
	)
	cases := []struct {
		principal, topic string
		want             kerr.Code
	}{
		{alice, "t1", kerr.None},
		{alice, "t2", kerr.TopicAuthorizationFailed},
		{bob, "t1", kerr.TopicAuthorizationFailed}, // the prefixed DENY from bob's host wins over ALL
		{"User:carol", "t1", kerr.TopicAuthorizationFailed},
		{"", "t1", kerr.TopicAuthorizationFailed}, // anonymous
		{admin, "t2", kerr.None},                  // super user, no ACL needed
		{alice, "nosuch", kerr.TopicAuthorizationFailed},
	}
	for _, c := range cases {
		if got := produceAs(t, b, c.principal, c.topic); got != c.want {
			t.Errorf("%q produces to %s: %v, want %v", c.principal, c.topic, got, c.want)
		}
	}
}

func TestMetadataShowsOnlyDescribableTopics(t *testing.T) {
	b := startACLBroker(t, topicACL("t1", alice, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow))
	req := kmsg.NewPtrMetadataRequest()
	req.Version, req.IncludeTopicAuthorizedOperations = 12, true
	resp := callAs(t, b, alice, req).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 || *resp.Topics[0].Topic != "t1" {
		t.Fatalf("alice's metadata of all topics: %+v, want t1 only", resp.Topics)
	}
	if ops := resp.Topics[0].AuthorizedOperations; ops != 1<<3|1<<8 {
		t.Errorf("alice's authorized operations on t1: %b, want READ and DESCRIBE", ops)
	}
	named := kmsg.NewPtrMetadataRequest()
	named.Version = 12
	for _, n := range []string{"t1", "t2"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		named.Topics = append(named.Topics, rt)
	}
	codes := map[string]kerr.Code{}
	for _, rt := range callAs(t, b, alice, named).(*kmsg.MetadataResponse).Topics {
		codes[*rt.Topic] = kerr.Code(rt.ErrorCode)
	}
	if codes["t1"] != kerr.None || codes["t2"] != kerr.TopicAuthorizationFailed || len(codes) != 2 {
		t.Errorf("alice's metadata of t1 and t2: %v", codes)
	}
	if all := callAs(t, b, admin, req).(*kmsg.MetadataResponse); len(all.Topics) != 2 {
		t.Errorf("the super user sees %d topics, want 2", len(all.Topics))
	}
}

func TestACLAPIsRefuseAndValidate(t *testing.T) {
	b := startACLBroker(t)
	create := kmsg.NewPtrCreateACLsRequest()
	create.Version = 3
	create.Creations = []kmsg.CreateACLsRequestCreation{
		topicACL("t1", alice, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
		aclOf(kmsg.ACLResourceTypeCluster, "not-the-cluster", kmsg.ACLResourcePatternTypeLiteral, alice, "*", kmsg.ACLOperationAlter, kmsg.ACLPermissionTypeAllow),
		aclOf(kmsg.ACLResourceTypeTopic, "t1", kmsg.ACLResourcePatternTypeMatch, alice, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
		topicACL("t1", "alice", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
	}
	for _, r := range callAs(t, b, alice, create).(*kmsg.CreateACLsResponse).Results {
		if kerr.Code(r.ErrorCode) != kerr.ClusterAuthorizationFailed {
			t.Errorf("alice creates ACLs: %v, want CLUSTER_AUTHORIZATION_FAILED", kerr.Code(r.ErrorCode))
		}
	}
	want := []kerr.Code{kerr.None, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest}
	for i, r := range callAs(t, b, admin, create).(*kmsg.CreateACLsResponse).Results {
		if kerr.Code(r.ErrorCode) != want[i] {
			t.Errorf("admin creates ACL %d: %v, want %v", i, kerr.Code(r.ErrorCode), want[i])
		}
	}
	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.Version, describe.ResourceType, describe.ResourcePatternType = 3, kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	describe.Operation, describe.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	if r := callAs(t, b, alice, describe).(*kmsg.DescribeACLsResponse); kerr.Code(r.ErrorCode) != kerr.ClusterAuthorizationFailed {
		t.Errorf("alice describes ACLs: %v", kerr.Code(r.ErrorCode))
	}
	if r := callAs(t, b, admin, describe).(*kmsg.DescribeACLsResponse); r.ErrorCode != 0 || len(r.Resources) != 1 || len(r.Resources[0].ACLs) != 1 {
		t.Errorf("admin describes ACLs: %v %+v", kerr.Code(r.ErrorCode), r.Resources)
	}
	describe.Operation = kmsg.ACLOperationUnknown
	if r := callAs(t, b, admin, describe).(*kmsg.DescribeACLsResponse); kerr.Code(r.ErrorCode) != kerr.InvalidRequest {
		t.Errorf("a filter with an UNKNOWN operation: %v, want INVALID_REQUEST", kerr.Code(r.ErrorCode))
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	del.Version = 3
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeMatch, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	f.ResourceName = kmsg.StringPtr("t1")
	bad := f
	bad.PermissionType = kmsg.ACLPermissionTypeUnknown
	del.Filters = []kmsg.DeleteACLsRequestFilter{f, bad}
	r := callAs(t, b, admin, del).(*kmsg.DeleteACLsResponse)
	if r.Results[0].ErrorCode != 0 || len(r.Results[0].MatchingACLs) != 1 || kerr.Code(r.Results[1].ErrorCode) != kerr.InvalidRequest {
		t.Errorf("admin deletes: %+v", r.Results)
	}
}

func TestConfigsAndClusterAPIsAuthorized(t *testing.T) {
	b := startACLBroker(t, topicACL("t1", alice, kmsg.ACLOperationAlterConfigs, kmsg.ACLPermissionTypeAllow))
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	for _, r := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, "t1"}, {kmsg.ConfigResourceTypeTopic, "t2"}, {kmsg.ConfigResourceTypeBroker, "0"}} {
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = r.typ, r.name
		req.Resources = append(req.Resources, rr)
	}
	codes := map[string]kerr.Code{}
	for _, r := range callAs(t, b, alice, req).(*kmsg.DescribeConfigsResponse).Resources {
		codes[r.ResourceName] = kerr.Code(r.ErrorCode)
	}
	want := map[string]kerr.Code{"t1": kerr.None, "t2": kerr.TopicAuthorizationFailed, "0": kerr.ClusterAuthorizationFailed}
	for k, v := range want {
		if codes[k] != v {
			t.Errorf("alice describes configs of %s: %v, want %v", k, codes[k], v)
		}
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	if r := callAs(t, b, alice, dc).(*kmsg.DescribeClusterResponse); kerr.Code(r.ErrorCode) != kerr.ClusterAuthorizationFailed {
		t.Errorf("alice describes the cluster: %v", kerr.Code(r.ErrorCode))
	}
	if r := callAs(t, b, admin, dc).(*kmsg.DescribeClusterResponse); r.ErrorCode != 0 {
		t.Errorf("admin describes the cluster: %v", kerr.Code(r.ErrorCode))
	}
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version, del.TopicNames = 3, []string{"t1"}
	if r := callAs(t, b, alice, del).(*kmsg.DeleteTopicsResponse); len(r.Topics) != 1 || kerr.Code(r.Topics[0].ErrorCode) != kerr.TopicAuthorizationFailed {
		t.Errorf("alice deletes t1: %+v", r.Topics)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	var id [16]byte
	for _, rt := range callAs(t, b, admin, md).(*kmsg.MetadataResponse).Topics {
		if *rt.Topic == "t1" {
			id = rt.TopicID
		}
	}
	byID := kmsg.NewPtrDeleteTopicsRequest()
	byID.Version = 6
	byID.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: id}}
	if r := callAs(t, b, alice, byID).(*kmsg.DeleteTopicsResponse); len(r.Topics) != 1 || kerr.Code(r.Topics[0].ErrorCode) != kerr.TopicAuthorizationFailed {
		t.Errorf("alice deletes t1 by id: %+v", r.Topics)
	}
	byID.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: id}} // the gate took it out of alice's request
	if r := callAs(t, b, admin, byID).(*kmsg.DeleteTopicsResponse); len(r.Topics) != 1 || r.Topics[0].ErrorCode != 0 {
		t.Errorf("admin deletes t1 by id: %+v", r.Topics)
	}
}

func TestNoAuthorizerByDefault(t *testing.T) {
	b := startBrokerWith(t, t.TempDir(), nil)
	if b.env.Auth != nil {
		t.Fatal("an authorizer without authorizer.class.name")
	}
	createTopic(t, b, "t", 1)
	if got := produceAs(t, b, "User:anyone", "t"); got != kerr.None {
		t.Errorf("produce without an authorizer: %v", got)
	}
}

// TestACLAPIsEveryVersion creates, describes and deletes an ACL at each
// version Kafka 3.9 serves (v0 has no pattern type: LITERAL).
func TestACLAPIsEveryVersion(t *testing.T) {
	b := startACLBroker(t)
	for v := int16(0); v <= 3; v++ {
		name := "v" + string(rune('0'+v))
		create := kmsg.NewPtrCreateACLsRequest()
		create.Version = v
		create.Creations = []kmsg.CreateACLsRequestCreation{topicACL(name, alice, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)}
		if r := callAs(t, b, admin, create).(*kmsg.CreateACLsResponse); len(r.Results) != 1 || r.Results[0].ErrorCode != 0 {
			t.Fatalf("CreateAcls v%d: %+v", v, r.Results)
		}
		describe := kmsg.NewPtrDescribeACLsRequest()
		describe.Version, describe.ResourceType, describe.ResourceName = v, kmsg.ACLResourceTypeTopic, kmsg.StringPtr(name)
		describe.ResourcePatternType, describe.Operation, describe.PermissionType = kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		if r := callAs(t, b, admin, describe).(*kmsg.DescribeACLsResponse); r.ErrorCode != 0 || len(r.Resources) != 1 || r.Resources[0].ACLs[0].Principal != alice {
			t.Fatalf("DescribeAcls v%d: %v %+v", v, kerr.Code(r.ErrorCode), r.Resources)
		}
		del := kmsg.NewPtrDeleteACLsRequest()
		del.Version = v
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName, f.Operation, f.PermissionType = kmsg.ACLResourceTypeTopic, kmsg.StringPtr(name), kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		del.Filters = []kmsg.DeleteACLsRequestFilter{f}
		if r := callAs(t, b, admin, del).(*kmsg.DeleteACLsResponse); r.Results[0].ErrorCode != 0 || len(r.Results[0].MatchingACLs) != 1 {
			t.Fatalf("DeleteAcls v%d: %+v", v, r.Results)
		}
	}
	if n := b.Authorizer().State().Len(); n != 0 {
		t.Errorf("%d ACLs left", n)
	}
}

// TestMetadataAutoCreationNeedsCreate: a topic Metadata would auto-create
// needs CREATE on the cluster or on the topic, else the client gets
// TOPIC_AUTHORIZATION_FAILED and nothing is made.
func TestMetadataAutoCreationNeedsCreate(t *testing.T) {
	b := startACLBroker(t,
		topicACL("new1", alice, kmsg.ACLOperationDescribe, kmsg.ACLPermissionTypeAllow),
		topicACL("new2", alice, kmsg.ACLOperationCreate, kmsg.ACLPermissionTypeAllow),
		topicACL("new2", alice, kmsg.ACLOperationDescribe, kmsg.ACLPermissionTypeAllow))
	ask := func(name string) kerr.Code {
		req := kmsg.NewPtrMetadataRequest()
		req.Version, req.AllowAutoTopicCreation = 12, true
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = []kmsg.MetadataRequestTopic{rt}
		resp := callAs(t, b, alice, req).(*kmsg.MetadataResponse)
		if len(resp.Topics) != 1 {
			t.Fatalf("metadata of %s: %+v", name, resp.Topics)
		}
		return kerr.Code(resp.Topics[0].ErrorCode)
	}
	if got := ask("new1"); got != kerr.TopicAuthorizationFailed {
		t.Errorf("auto-creating new1 without CREATE: %v", got)
	}
	if got := ask("new2"); got != kerr.None && got != kerr.LeaderNotAvailable {
		t.Errorf("auto-creating new2 with CREATE: %v", got)
	}
	all := kmsg.NewPtrMetadataRequest()
	all.Version = 12
	names := map[string]bool{}
	for _, rt := range callAs(t, b, admin, all).(*kmsg.MetadataResponse).Topics {
		names[*rt.Topic] = true
	}
	if names["new1"] || !names["new2"] {
		t.Errorf("topics after the two asks: %v, want new2 and not new1", names)
	}
}

// TestMetadataOfAMissingTopicWithoutAutoCreation: with
// auto.create.topics.enable off, a missing topic the client may describe
// but not create is UNKNOWN_TOPIC_OR_PARTITION, not an authorization
// failure: nothing would be created.
func TestMetadataOfAMissingTopicWithoutAutoCreation(t *testing.T) {
	b := startBrokerWith(t, t.TempDir(), map[string]string{"authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer",
		"auto.create.topics.enable": "false", "super.users": admin})
	create := kmsg.NewPtrCreateACLsRequest()
	create.Version = 3
	create.Creations = []kmsg.CreateACLsRequestCreation{topicACL("missing", alice, kmsg.ACLOperationDescribe, kmsg.ACLPermissionTypeAllow)}
	if r := callAs(t, b, admin, create).(*kmsg.CreateACLsResponse); r.Results[0].ErrorCode != 0 {
		t.Fatalf("create the ACL: %v", kerr.Code(r.Results[0].ErrorCode))
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Version, req.AllowAutoTopicCreation = 12, true
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("missing")
	req.Topics = []kmsg.MetadataRequestTopic{rt}
	if r := callAs(t, b, alice, req).(*kmsg.MetadataResponse); len(r.Topics) != 1 || kerr.Code(r.Topics[0].ErrorCode) != kerr.UnknownTopicOrPartition {
		t.Errorf("metadata of a missing topic: %+v", r.Topics)
	}
}
