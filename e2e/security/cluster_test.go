package security

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// TestClusterSharesACLs runs two samsa brokers on one ZooKeeper with ACLs
// on (allow.everyone.if.no.acl.found, so the anonymous test client may
// administer): an ACL created through one broker is written in Kafka's
// ZooKeeper layout and enforced by the other, and deleting it through
// the other is seen by the first.
func TestClusterSharesACLs(t *testing.T) {
	testkit.Require(t, testkit.ZooKeeperAvailable(), "ZooKeeper is not installed (run `make deps`)")
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Brokers: 2, Properties: map[string]string{
		"authorizer.class.name": aclAuthorizer, "allow.everyone.if.no.acl.found": "true",
		"controlled.shutdown.retry.backoff.ms": "1000"}})
	first, second := c.Broker(0), c.Broker(1)
	ctx := deadline(t, 2*time.Minute)
	adm := newAdmin(t, first.Addr())
	if _, err := adm.CreateTopics(ctx, 1, 2, nil, "x"); err != nil {
		t.Fatal(err)
	}
	describable := func(b *testkit.ClusterBroker) int16 { return metadataCode(ctx, t, b.Addr(), b.ID(), "x") }
	waitFor(ctx, t, "x to be describable through the second broker", func() bool { return describable(second) == 0 })

	deny := kadm.NewACLs().Deny("User:ANONYMOUS").DenyHosts("*").Topics("x").Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)
	if res, err := adm.CreateACLs(ctx, deny); err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("create the DENY through the first broker: %v %+v", err, res)
	}
	conn := c.ZooKeeperConn()
	data, _, err := conn.Get(c.ZKPath("/kafka-acl/Topic/x"))
	if err != nil || string(data) != `{"acls":[{"principal":"User:ANONYMOUS","permissionType":"Deny","host":"*","operation":"Describe"}],"version":1}` {
		t.Errorf("/kafka-acl/Topic/x: %s, %v", data, err)
	}
	changes, _, err := conn.Children(c.ZKPath("/kafka-acl-changes"))
	if err != nil || !slices.Contains(changes, "acl_changes_0000000000") {
		t.Fatalf("/kafka-acl-changes: %v, %v", changes, err)
	}
	if data, _, err := conn.Get(c.ZKPath("/kafka-acl-changes/acl_changes_0000000000")); err != nil || string(data) != "TOPIC:x" {
		t.Errorf("the change notification: %q, %v", data, err)
	}
	waitFor(ctx, t, "the second broker to enforce the DENY", func() bool { return describable(second) == kerr.TopicAuthorizationFailed.Code })

	res, err := newAdmin(t, second.Addr()).DeleteACLs(ctx, deny)
	if err != nil || len(res) != 1 || res[0].Err != nil || len(res[0].Deleted) != 1 {
		t.Fatalf("delete the DENY through the second broker: %v %+v", err, res)
	}
	waitFor(ctx, t, "the first broker to drop the DENY", func() bool { return describable(first) == 0 })
	if exists, _, err := conn.Exists(c.ZKPath("/kafka-acl/Topic/x")); err != nil || exists {
		t.Errorf("/kafka-acl/Topic/x after the last ACL went: exists %v, %v", exists, err)
	}
}

// metadataCode asks broker id at addr itself for topic's metadata and
// returns the topic's error code.
func metadataCode(ctx context.Context, t *testing.T, addr string, id int32, topic string) int16 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = []kmsg.MetadataRequestTopic{rt}
	resp, err := cl.Broker(int(id)).RetriableRequest(ctx, req)
	if err != nil {
		return kerr.UnknownServerError.Code
	}
	for _, got := range resp.(*kmsg.MetadataResponse).Topics {
		if got.Topic != nil && *got.Topic == topic {
			return got.ErrorCode
		}
	}
	return kerr.UnknownTopicOrPartition.Code
}

// waitFor polls done until it holds or ctx ends (a change to reach
// another broker through ZooKeeper has no event a client can wait on).
func waitFor(ctx context.Context, t *testing.T, what string, done func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}
