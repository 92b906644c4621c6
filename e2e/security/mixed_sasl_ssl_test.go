package security

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
)

// TestSamsaJoinsKafkaOverSASLSSL: a samsa broker joins an Apache Kafka
// 3.9.1 broker whose inter-broker listener is SASL_SSL (PLAIN between
// brokers, PKCS#12 keystores): Kafka's controller reaches samsa over it,
// samsa's follower fetches from Kafka's leader and its AlterPartition go
// to Kafka's controller over it, and Kafka's follower fetches from
// samsa's leader. Both partitions' ISR fill up, and acks=all produces
// with min.insync.replicas=2 succeed.
func TestSamsaJoinsKafkaOverSASLSSL(t *testing.T) {
	const samsaID = 7
	testkit.RequireKafka39(t)
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	const pass = "store-secret"
	ssl := map[string]string{
		"ssl.keystore.type": "PKCS12", "ssl.keystore.password": pass, "ssl.key.password": pass,
		"ssl.keystore.location": ca.Broker(t, pkix.Name{CommonName: "broker"}).WritePKCS12(t, dir, "broker.p12", pass),
		"ssl.truststore.type":   "PKCS12", "ssl.truststore.password": pass,
		"ssl.truststore.location":                       ca.WritePKCS12(t, dir, "ca.p12", pass),
		"sasl.enabled.mechanisms":                       "PLAIN",
		"sasl.mechanism.inter.broker.protocol":          "PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config": clusterPlainJAAS,
	}
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Kafka39, Brokers: 1, Listener: "SASL_SSL", Properties: ssl})
	// Flags for samsa: the listener's JAAS entry goes as sasl.jaas.config,
	// which both sides of samsa's PLAIN fall back to (a listener-prefixed
	// key is no flag).
	args := []string{"--zookeeper.connect", c.ZooKeeperConnect(), "--broker.id", fmt.Sprint(samsaID),
		"--listeners", fmt.Sprintf("SASL_SSL://127.0.0.1:%d", freePort(t)), "--inter.broker.listener.name", "SASL_SSL"}
	for k, v := range ssl {
		if k == "listener.name.sasl_ssl.plain.sasl.jaas.config" {
			k = "sasl.jaas.config"
		}
		args = append(args, "--"+k, v)
	}
	samsa := testkit.StartBroker(t, testkit.BrokerConfig{Args: args})
	if _, err := c.WaitForBrokers(2); err != nil {
		t.Fatal(err)
	}
	ctx := deadline(t, 3*time.Minute)
	cl := testkit.NewClient(t, kgo.SeedBrokers(c.Broker(0).Addr(), samsa.Addr()), kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil)),
		kgo.SASL(plainMech(adminUser, adminPass)), kgo.RetryTimeout(30*time.Second), kgo.RequiredAcks(kgo.AllISRAcks()))
	kafkaID := c.Broker(0).ID()
	req := kmsg.NewPtrCreateTopicsRequest()
	for topic, replicas := range map[string][]int32{"kafka-led": {kafkaID, samsaID}, "samsa-led": {samsaID, kafkaID}} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = 0, replicas
		rt.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{ra}
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = "min.insync.replicas", kmsg.StringPtr("2")
		rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{cfg}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			t.Fatalf("create %s: error %d", rt.Topic, rt.ErrorCode)
		}
	}
	adm := kadm.NewClient(cl)
	for _, topic := range []string{"kafka-led", "samsa-led"} {
		waitISR(ctx, t, adm, topic, 2)
		for i := range 10 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
				t.Fatalf("produce to %s: %v", topic, err)
			}
		}
	}
	ends, err := adm.ListEndOffsets(context.WithoutCancel(ctx), "kafka-led", "samsa-led")
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil || o.Offset != 10 {
			t.Errorf("%s/%d: end offset %d, %v; want 10", o.Topic, o.Partition, o.Offset, o.Err)
		}
	})
}
