package tls

import (
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
)

// A broker with a PLAINTEXT and an SSL listener tells each client the
// address of the listener it came in on (Metadata, FindCoordinator), as
// Kafka does: an SSL client is never sent to the PLAINTEXT port, and
// both produce and consume through a consumer group.
func TestPlaintextAndSSLListenersSideBySide(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	b := testkit.StartInProcess(t, "listeners", "PLAINTEXT://127.0.0.2:0,SSL://127.0.0.1:0", // netloop wants distinct addresses
		"ssl.keystore.type", "PEM", "ssl.keystore.location", ca.Server(t).WritePEM(t, dir, "k.pem"))
	addrs := b.Server.Addrs()
	for i, opts := range [][]kgo.Opt{nil, {kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil))}} {
		seed := addrs[i].String()
		name := []string{"plaintext", "ssl"}[i]
		adm := kadm.NewClient(testkit.NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(seed)}, opts...)...))
		md, err := adm.BrokerMetadata(ctx(t))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, port, _ := net.SplitHostPort(seed)
		if len(md.Brokers) != 1 || strconv.Itoa(int(md.Brokers[0].Port)) != port {
			t.Fatalf("%s client told %v, want port %s", name, md.Brokers, port)
		}
		topic := "side-" + name
		prod := testkit.NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(seed), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation()}, opts...)...)
		if err := prod.ProduceSync(ctx(t), &kgo.Record{Value: []byte(name)}).FirstErr(); err != nil {
			t.Fatalf("%s produce: %v", name, err)
		}
		cons := testkit.NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(seed), kgo.ConsumeTopics(topic), kgo.ConsumerGroup("g-" + name),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
		fs := cons.PollFetches(ctx(t))
		if err := fs.Err0(); err != nil {
			t.Fatalf("%s consume: %v", name, err)
		}
		if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != name {
			t.Fatalf("%s consumed %v", name, recs)
		}
		if err := cons.CommitUncommittedOffsets(ctx(t)); err != nil {
			t.Fatalf("%s commit (FindCoordinator): %v", name, err)
		}
	}
}
