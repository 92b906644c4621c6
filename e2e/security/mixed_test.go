package security

import (
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/testkit"
)

// TestKafkaAndSamsaShareACLs joins a samsa broker to an Apache Kafka
// 3.9.1 cluster (one ZooKeeper, ACLs on in both): an ACL created through
// Kafka is enforced by samsa, and one created through samsa by Kafka.
func TestKafkaAndSamsaShareACLs(t *testing.T) {
	const samsaID = 7
	testkit.RequireKafka39(t)
	props := map[string]string{"authorizer.class.name": aclAuthorizer, "allow.everyone.if.no.acl.found": "true"}
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Kafka39, Brokers: 1, Properties: props})
	kafka := c.Broker(0)
	samsa := testkit.StartBroker(t, testkit.BrokerConfig{Args: []string{"--zookeeper.connect", c.ZooKeeperConnect(),
		"--broker.id", strconv.Itoa(samsaID), "--authorizer.class.name", aclAuthorizer, "--allow.everyone.if.no.acl.found", "true"}})
	ctx := deadline(t, 3*time.Minute)
	if _, err := c.WaitForBrokers(2); err != nil {
		t.Fatal(err)
	}
	if _, err := newAdmin(t, kafka.Addr()).CreateTopics(ctx, 1, 1, nil, "k", "s"); err != nil {
		t.Fatal(err)
	}
	describable := func(addr string, id int32, topic string) int16 { return metadataCode(ctx, t, addr, id, topic) }
	waitFor(ctx, t, "samsa to know topic k", func() bool { return describable(samsa.Addr(), samsaID, "k") == 0 })

	deny := func(topic string) *kadm.ACLBuilder {
		return kadm.NewACLs().Deny("User:ANONYMOUS").DenyHosts("*").Topics(topic).Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)
	}
	if res, err := newAdmin(t, kafka.Addr()).CreateACLs(ctx, deny("k")); err != nil || res[0].Err != nil {
		t.Fatalf("create through Kafka: %v %+v", err, res)
	}
	waitFor(deadline(t, 30*time.Second), t, "samsa to enforce Kafka's ACL", func() bool {
		return describable(samsa.Addr(), samsaID, "k") == kerr.TopicAuthorizationFailed.Code
	})
	if res, err := newAdmin(t, samsa.Addr()).CreateACLs(ctx, deny("s")); err != nil || res[0].Err != nil {
		t.Fatalf("create through samsa: %v %+v", err, res)
	}
	waitFor(ctx, t, "Kafka to enforce samsa's ACL", func() bool {
		return describable(kafka.Addr(), kafka.ID(), "s") == kerr.TopicAuthorizationFailed.Code
	})
}
