package security

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// clusterScramJAAS is the inter-broker listener's SCRAM-SHA-512 entry:
// the username and password each broker logs in to the others with.
const clusterScramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="broker-secret";`

// SCRAM between brokers, as Kafka's docs set it up: the broker user's
// SCRAM-SHA-512 credential is written into ZooKeeper with Kafka 3.9.1's
// `kafka-configs.sh --zookeeper` before any broker starts, then three
// brokers whose one listener (SASL_PLAINTEXT, also the inter-broker one)
// enables SCRAM-SHA-512 only log in to each other with it
// (sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512), ACLs on with the
// broker as the super user. Replication, the controller's requests and
// a leader's death all go over that link; nothing acknowledged is lost.
func TestClusterScramBetweenBrokers(t *testing.T) {
	k := testkit.RequireKafka39(t)
	testkit.Require(t, testkit.ZooKeeperAvailable(), "ZooKeeper is not installed (run `make deps`)")
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Listener: "SASL_PLAINTEXT",
		BeforeStart: func(c *testkit.Cluster) error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := k.Run(ctx, testkit.Kafka39ConfigCommand, "--zookeeper", c.ZooKeeperConnect(), "--alter",
				"--entity-type", "users", "--entity-name", brokerUser, "--add-config", "SCRAM-SHA-512=[iterations=4096,password="+brokerPass+"]")
			if err != nil {
				return fmt.Errorf("kafka-configs --zookeeper: %w\n%s", err, out)
			}
			return nil
		},
		Properties: map[string]string{
			"sasl.enabled.mechanisms":                                     "SCRAM-SHA-512",
			"sasl.mechanism.inter.broker.protocol":                        "SCRAM-SHA-512",
			"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": clusterScramJAAS,
			"authorizer.class.name":                                       aclAuthorizer,
			"super.users":                                                 "User:" + brokerUser,
			"controlled.shutdown.retry.backoff.ms":                        "1000",
		}})
	asBroker := func(addrs []string, opts ...kgo.Opt) *kgo.Client {
		return testkit.NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.SASL(scramMech("SCRAM-SHA-512", brokerUser, brokerPass)),
			kgo.RetryTimeout(30 * time.Second)}, opts...)...)
	}
	ctx := deadline(t, 4*time.Minute)
	adm := kadm.NewClient(asBroker(c.Addrs()))
	const topic, group, partitions = "scram-replicated", "g", 3
	if _, err := adm.CreateTopic(ctx, partitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, topic); err != nil {
		t.Fatal(err)
	}
	roundTripThroughLeaderKill(ctx, t, c, adm, asBroker, func(addrs []string) *kadm.Client { return kadm.NewClient(asBroker(addrs)) },
		topic, group, partitions)
}
