package security

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
)

// The broker's own login on the inter-broker listener, and the operator's.
const (
	brokerUser, brokerPass = "broker", "broker-secret"
	// clusterPlainJAAS is the listener's PLAIN entry: username and
	// password are what each broker logs in to the others with, the
	// user_ options who PLAIN accepts, as Kafka's docs configure it.
	clusterPlainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" user_broker="broker-secret" user_admin="admin-secret";`
)

// secureCluster is three samsa brokers (child processes) whose one
// listener, SASL_SSL, serves clients and the brokers themselves: PEM
// keystore and truststore from a test CA (the brokers check each other's
// certificates, host names included), PLAIN between brokers, PLAIN and
// SCRAM-SHA-512 for clients, ACLs on with the brokers' and the
// operator's principals as super users (the inter-broker APIs need
// CLUSTER_ACTION, which nobody else is granted).
type secureCluster struct {
	*testkit.Cluster
	ca     *tlstest.CA
	caFile string
}

func startSecureCluster(t *testing.T) *secureCluster {
	t.Helper()
	testkit.Require(t, testkit.ZooKeeperAvailable(), "ZooKeeper is not installed (run `make deps`)")
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	caFile := ca.WritePEM(t, dir, "ca.pem")
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Listener: "SASL_SSL", Properties: map[string]string{
		"ssl.keystore.type": "PEM", "ssl.keystore.location": ca.Server(t).WritePEM(t, dir, "broker.pem"),
		"ssl.truststore.type": "PEM", "ssl.truststore.location": caFile,
		"sasl.enabled.mechanisms":                       "PLAIN,SCRAM-SHA-512",
		"sasl.mechanism.inter.broker.protocol":          "PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config": clusterPlainJAAS,
		"authorizer.class.name":                         aclAuthorizer,
		"super.users":                                   "User:" + brokerUser + ";User:" + adminUser,
		"controlled.shutdown.retry.backoff.ms":          "1000",
	}})
	return &secureCluster{Cluster: c, ca: ca, caFile: caFile}
}

// client is a franz-go client of the given brokers over SASL_SSL.
func (c *secureCluster) client(t *testing.T, addrs []string, mech func() kgo.Opt, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return testkit.NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.DialTLSConfig(tlstest.ClientConfig(c.ca, nil)),
		mech(), kgo.RetryTimeout(30 * time.Second)}, opts...)...)
}

func asAdmin() kgo.Opt { return kgo.SASL(plainMech(adminUser, adminPass)) }
func asAlice() kgo.Opt { return kgo.SASL(scramMech("SCRAM-SHA-512", aliceUser, alicePass)) }

// TestClusterSASLSSLBetweenBrokers: everything the brokers say to each
// other goes over SASL_SSL (the controller's LeaderAndIsr and
// UpdateMetadata, the followers' fetches, AlterPartition, the producer-id
// blocks), so an RF 3 topic whose replicas all join the ISR, acks=all
// produces, and a leader's death with the controller moving leaders to
// the survivors all prove the link. A SCRAM user with ACLs on the topic
// reads every acknowledged record back in a group, half before the kill
// and half after.
func TestClusterSASLSSLBetweenBrokers(t *testing.T) {
	c := startSecureCluster(t)
	ctx := deadline(t, 4*time.Minute)
	adm := kadm.NewClient(c.client(t, c.Addrs(), asAdmin))
	const topic, group, partitions = "replicated", "g", 3
	if _, err := adm.CreateTopic(ctx, partitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, topic); err != nil {
		t.Fatal(err)
	}
	aliceWithACLs(ctx, t, adm, group, topic)

	roundTripThroughLeaderKill(ctx, t, c.Cluster, adm, func(addrs []string, opts ...kgo.Opt) *kgo.Client {
		return c.client(t, addrs, asAlice, opts...)
	}, func(addrs []string) *kadm.Client { return kadm.NewClient(c.client(t, addrs, asAdmin)) }, topic, group, partitions)
}

// roundTripThroughLeaderKill proves the brokers' link: every replica of
// topic (RF 3, partitions partitions) joins the ISR, acks=all produces
// succeed, the leader of partition 0 dies and the controller moves its
// leaderships to the survivors, and a group reads every acknowledged
// record back exactly once, half before the kill and half after.
// newClient makes a client of the given brokers (with opts); newAdmin
// an admin client.
func roundTripThroughLeaderKill(ctx context.Context, t *testing.T, c *testkit.Cluster, adm *kadm.Client,
	newClient func(addrs []string, opts ...kgo.Opt) *kgo.Client, newAdmin func(addrs []string) *kadm.Client,
	topic, group string, partitions int) {
	t.Helper()
	liveAddrs := func() []string {
		var out []string
		for _, b := range c.Brokers() {
			if b.Running() {
				out = append(out, b.Addr())
			}
		}
		return out
	}
	// Every replica catches up over SASL_SSL: the ISR is all three.
	leaders := waitISR(ctx, t, adm, topic, 3)

	values := map[string]bool{}
	produce := func(addrs []string, from, n int) {
		t.Helper()
		p := newClient(addrs, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic))
		for i := from; i < from+n; i++ {
			v := fmt.Sprintf("v%04d", i)
			if err := p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", v, err)
			}
			values[v] = true
		}
	}
	produce(c.Addrs(), 0, 150)

	// Alice reads them in her group (which makes __consumer_offsets,
	// RF 3, while three brokers are up) and commits.
	got := map[string]int{}
	consume := func(addrs []string) {
		t.Helper()
		consumer := newClient(addrs, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
		defer consumer.Close()
		for len(got) < len(values) {
			fs := consumer.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("consumed %d of %d distinct values: %v", len(got), len(values), ctx.Err())
			}
			for _, e := range fs.Errors() {
				t.Fatalf("fetch %s/%d: %v", e.Topic, e.Partition, e.Err)
			}
			fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)]++ })
		}
		if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	consume(c.Addrs())

	// The leader of partition 0 dies; the controller (maybe another
	// broker now) moves its leaderships to the survivors.
	victim := leaders[0]
	c.BrokerByID(victim).Kill()
	live := liveAddrs()
	survivors := newAdmin(live)
	waitFor(ctx, t, "leaders away from the killed broker", func() bool {
		md, err := survivors.Metadata(ctx, topic)
		if err != nil {
			return false
		}
		ps := md.Topics[topic].Partitions
		return len(ps) == partitions && !slices.ContainsFunc(ps.Sorted(), func(p kadm.PartitionDetail) bool { return p.Leader == victim || p.Leader < 0 })
	})
	produce(live, 150, 150)

	// The group goes on from its commit, whichever broker coordinates
	// it now: every acknowledged record, each once.
	consume(live)
	for v, n := range got {
		if !values[v] || n != 1 {
			t.Errorf("consumed %s %d times (produced: %v)", v, n, values[v])
		}
	}
}

// waitISR waits until every partition of topic has isr in-sync replicas,
// and returns each partition's leader.
func waitISR(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, isr int) map[int32]int32 {
	t.Helper()
	leaders := map[int32]int32{}
	waitFor(ctx, t, fmt.Sprintf("%s's ISR to be %d replicas", topic, isr), func() bool {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return false
		}
		ps := md.Topics[topic].Partitions
		if len(ps) == 0 {
			return false
		}
		for _, p := range ps {
			if len(p.ISR) != isr || p.Leader < 0 {
				return false
			}
			leaders[p.Partition] = p.Leader
		}
		return true
	})
	return leaders
}

// The other clients over the same SASL_SSL cluster: librdkafka (kcat)
// produces (acks=all) to and consumes from topic k with SCRAM-SHA-512, and the Java client runs the
// sasl-ssl-acl scenario (allowed topic, denied topic, wrong password)
// with every broker as bootstrap.
func TestClusterSASLSSLOtherClients(t *testing.T) {
	c := startSecureCluster(t)
	ctx := deadline(t, 4*time.Minute)
	adm := kadm.NewClient(c.client(t, c.Addrs(), asAdmin))
	if _, err := adm.CreateTopics(ctx, 1, 3, nil, "a", "b", "k"); err != nil {
		t.Fatal(err)
	}
	aliceWithACLs(ctx, t, adm, "g", "a", "k")
	waitISR(ctx, t, adm, "a", 3)
	waitISR(ctx, t, adm, "k", 3)

	t.Run("kcat", func(t *testing.T) {
		kcatBin := testkit.RequireTool(t, "kcat")
		kcatArgs := []string{"-b", c.Bootstrap(), "-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + c.caFile,
			"-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=" + aliceUser, "-X", "sasl.password=" + alicePass}
		if out, err := kcat(t, kcatBin, "one\ntwo\n", append(kcatArgs, "-P", "-t", "k", "-X", "acks=all")...); err != nil {
			t.Fatalf("kcat produce: %v\n%s", err, out)
		}
		if out, err := kcat(t, kcatBin, "", append(kcatArgs, "-C", "-t", "k", "-o", "beginning", "-e", "-q")...); err != nil || out != "one\ntwo\n" {
			t.Fatalf("kcat consume: %q, %v", out, err)
		}
	})

	t.Run("java", func(t *testing.T) {
		cp := testkit.InteropJava(t)
		t.Log(javaSASLSSLACL(ctx, t, cp, c.Bootstrap(), c.caFile))
		offs, err := adm.FetchOffsets(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := offs.Lookup("a", 0); !ok || o.At != 20 {
			t.Fatalf("group g's committed offset on a/0: %+v (found %v), want 20", o, ok)
		}
	})
}

// aliceWithACLs makes alice's SCRAM-SHA-512 credential and lets her
// write and read topics and read (join, commit in) group.
func aliceWithACLs(ctx context.Context, t *testing.T, adm *kadm.Client, group string, topics ...string) {
	t.Helper()
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: aliceUser, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: alicePass}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("SCRAM user: %v", err)
	}
	allowAlice(ctx, t, adm, group, topics...)
}

// allowAlice lets alice write and read topics and read (join, commit in)
// group.
func allowAlice(ctx context.Context, t *testing.T, adm *kadm.Client, group string, topics ...string) {
	t.Helper()
	alice := func() *kadm.ACLBuilder {
		return kadm.NewACLs().Allow("User:" + aliceUser).AllowHosts("*").ResourcePatternType(kadm.ACLPatternLiteral)
	}
	for _, b := range []*kadm.ACLBuilder{alice().Topics(topics...).Operations(kadm.OpWrite, kadm.OpRead), alice().Groups(group).Operations(kadm.OpRead)} {
		rs, err := adm.CreateACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Err != nil {
				t.Fatalf("create ACL: %v", r.Err)
			}
		}
	}
}

// TestClusterMutualTLSBetweenBrokers: an SSL inter-broker listener with
// ssl.client.auth=required. Each broker dials the others with its
// keystore's certificate, whose subject is its principal (User:CN=broker),
// a super user; clients present their own (User:CN=admin). The ISR of an
// RF 3 topic filling up and acks=all produces prove the brokers' links.
func TestClusterMutualTLSBetweenBrokers(t *testing.T) {
	testkit.Require(t, testkit.ZooKeeperAvailable(), "ZooKeeper is not installed (run `make deps`)")
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Listener: "SSL", Properties: map[string]string{
		"ssl.keystore.type": "PEM", "ssl.keystore.location": ca.Broker(t, pkix.Name{CommonName: "broker"}).WritePEM(t, dir, "broker.pem"),
		"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.WritePEM(t, dir, "ca.pem"),
		"ssl.client.auth":       "required",
		"authorizer.class.name": aclAuthorizer,
		"super.users":           "User:CN=broker;User:CN=admin",
	}})
	ctx := deadline(t, 3*time.Minute)
	admin := ca.Client(t, pkix.Name{CommonName: "admin"})
	cl := testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.DialTLSConfig(tlstest.ClientConfig(ca, admin)),
		kgo.RetryTimeout(30*time.Second), kgo.DefaultProduceTopic("mtls"), kgo.RequiredAcks(kgo.AllISRAcks()))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("3")}, "mtls"); err != nil {
		t.Fatal(err)
	}
	waitISR(ctx, t, adm, "mtls", 3)
	for i := range 20 {
		if err := cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
			t.Fatalf("produce %d with min.insync.replicas=3: %v", i, err)
		}
	}
}
