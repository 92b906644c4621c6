package tls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
)

// Kafka's dynamic keystore update in a cluster: kafka-configs.sh
// --entity-type brokers --entity-name 1 --add-config
// listener.name.ssl.ssl.keystore.location=... writes /config/brokers/1
// in ZooKeeper, and broker 1, told by the change notification, has its
// SSL listener serve the new certificate without a restart; broker 2
// keeps its own. A keystore that cannot be read is refused with
// INVALID_CONFIG before anything is written.
func TestKeystoreReloadInCluster(t *testing.T) {
	k := testkit.RequireKafka39(t)
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	first, second := ca.Server(t), ca.Server(t)
	// The SSL listeners bind 127.0.0.2, so both listeners of every
	// broker can take a free port; the certificate names localhost.
	c := testkit.StartInProcessCluster(t, 2, "listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.2:0",
		"ssl.keystore.type", "PEM", "ssl.keystore.location", first.WritePEM(t, dir, "first.pem"))
	served := func(id int) *x509.Certificate {
		t.Helper()
		addr := c.Broker(id).Server.Addrs()[1].(*net.TCPAddr).AddrPort().String()
		conn, err := tls.Dial("tcp", addr, tlstest.ClientConfig(ca, nil))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	if !served(1).Equal(first.Leaf) || !served(2).Equal(first.Leaf) {
		t.Fatal("the brokers do not serve the first certificate")
	}

	const key = "listener.name.ssl.ssl.keystore.location"
	secondPath := second.WritePEM(t, dir, "second.pem")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := k.Run(ctx, testkit.Kafka39ConfigCommand, "--bootstrap-server", c.Broker(1).Addr,
		"--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config", key+"="+secondPath)
	if err != nil {
		t.Fatalf("kafka-configs: %v\n%s", err, out)
	}
	for !served(1).Equal(second.Leaf) {
		select {
		case <-ctx.Done():
			t.Fatal("broker 1 never served the new certificate")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !served(2).Equal(first.Leaf) {
		t.Fatal("broker 2 changed its certificate with broker 1's config")
	}

	// Refused, as Kafka refuses it: by the tool (its message names the
	// reason) and through the admin API (INVALID_CONFIG).
	missing := filepath.Join(dir, "missing.pem")
	out, err = k.Run(ctx, testkit.Kafka39ConfigCommand, "--bootstrap-server", c.Broker(1).Addr,
		"--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config", key+"="+missing)
	if err == nil || !strings.Contains(out, "InvalidConfigurationException") {
		t.Fatalf("kafka-configs with a missing keystore: %v\n%s", err, out)
	}
	adm, _ := c.Admin(t)
	notAKeystore := ca.WritePEM(t, dir, "ca.pem") // a certificate without its key
	res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: key, Value: &notAKeystore}}, 1)
	if err == nil {
		err = res[0].Err
	}
	if !errors.Is(err, kerr.InvalidConfig) {
		t.Fatalf("a keystore without a key: %v, want INVALID_CONFIG", err)
	}
	if got := storedBrokerConfig(ctx, t, adm, 1, key); got != secondPath {
		t.Fatalf("stored %s=%q, want %s", key, got, secondPath)
	}
	if !served(1).Equal(second.Leaf) {
		t.Fatal("a refused keystore changed the certificate")
	}
}
