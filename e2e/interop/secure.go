package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
)

// The sasl_ssl column: the single broker gets a second listener,
// SASL_SSL with a PEM keystore issued by a CA made for the run (a
// cluster's brokers get one too, and talk to each other on it), and a
// SCRAM-SHA-512 user made through the PLAINTEXT listener with the Kafka
// API (AlterUserScramCredentials) before any client runs. Each client
// then connects there trusting the CA, produces saslCount records to
// prefix-sasl and consumes them back in a group.

const (
	saslUser     = "interop"
	saslPassword = "interop-secret"
	saslMech     = "SCRAM-SHA-512"
	saslFeature  = "sasl_ssl"
)

// secureListener is where and how clients reach the SASL_SSL listener.
type secureListener struct {
	addr   string // host:port of the SASL_SSL listener
	caPath string // the CA certificate as PEM, for clients to trust
	ca     *tlstest.CA
}

// saslCount is the records each client sends over SASL_SSL: the column
// checks the handshake and the authenticated path, not throughput.
func saslCount(count int) int { return max(min(count/100, 100), 1) }

// makeCerts makes the run's CA and writes the broker's PEM keystore and
// the CA certificate into dir.
func makeCerts(dir string) (ca *tlstest.CA, keystore, caPath string, err error) {
	certs, err := testkit.WriteTestCerts(dir)
	if err != nil {
		return nil, "", "", err
	}
	return certs.CA, certs.KeystorePEM, certs.CAPEM, nil
}

// launchSecureBroker starts the single broker with a PLAINTEXT listener
// (the runner's and the main scenario's) and a SASL_SSL one, and makes
// the SCRAM user.
func launchSecureBroker(ctx context.Context) (*testkit.BrokerProcess, *secureListener, func(), error) {
	dir, err := os.MkdirTemp("", "interop-tls-")
	if err != nil {
		return nil, nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	ca, keystore, caPath, err := makeCerts(dir)
	if err == nil {
		var plain, secure int
		if plain, err = testkit.FreePort(); err == nil {
			secure, err = testkit.FreePort()
		}
		if err == nil {
			var b *testkit.BrokerProcess
			b, err = testkit.LaunchBroker(testkit.BrokerConfig{Port: plain, Args: []string{
				"--listeners", fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,SASL_SSL://127.0.0.1:%d", plain, secure),
				"--sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512",
				"--ssl.keystore.type", "PEM", "--ssl.keystore.location", keystore,
			}})
			if err == nil {
				s := &secureListener{addr: "127.0.0.1:" + strconv.Itoa(secure), caPath: caPath, ca: ca}
				if err = makeScramUser(ctx, b.Addr()); err != nil {
					b.Close()
				} else {
					return b, s, cleanup, nil
				}
			}
		}
	}
	cleanup()
	return nil, nil, nil, err
}

// makeScramUser creates the SCRAM user through the PLAINTEXT listener.
func makeScramUser(ctx context.Context, plainAddr string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(plainAddr))
	if err != nil {
		return err
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).AlterUserSCRAMs(cctx, nil, []kadm.UpsertSCRAM{
		{User: saslUser, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: saslPassword}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		return fmt.Errorf("creating the SCRAM user: %w", err)
	}
	return nil
}

// The cluster's brokers talk to each other on their SASL_SSL listener
// (PLAIN between brokers, with the listener's JAAS entry), which also
// serves the sasl_ssl column; the runner and the main scenario use a
// second, PLAINTEXT listener.
const clusterPlainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" user_broker="broker-secret";`

// launchSecureCluster starts n brokers whose inter-broker listener is
// SASL_SSL, with a PLAINTEXT one beside it, and makes the SCRAM user.
func launchSecureCluster(ctx context.Context, n int) (*testkit.Cluster, *secureListener, func(), error) {
	dir, err := os.MkdirTemp("", "interop-tls-")
	if err != nil {
		return nil, nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	ca, keystore, caPath, err := makeCerts(dir)
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	c, err := testkit.LaunchCluster(testkit.ClusterConfig{Kind: testkit.Samsa, Brokers: n, Listener: "SASL_SSL", ExtraListener: "PLAINTEXT",
		Properties: map[string]string{
			"ssl.keystore.type": "PEM", "ssl.keystore.location": keystore,
			"ssl.truststore.type": "PEM", "ssl.truststore.location": caPath,
			"sasl.enabled.mechanisms":                       "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
			"sasl.mechanism.inter.broker.protocol":          "PLAIN",
			"listener.name.sasl_ssl.plain.sasl.jaas.config": clusterPlainJAAS,
		}})
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	if err := makeScramUser(ctx, c.Broker(0).ExtraAddr()); err != nil {
		c.Close()
		cleanup()
		return nil, nil, nil, err
	}
	return c, &secureListener{addr: c.Broker(0).Addr(), caPath: caPath, ca: ca}, cleanup, nil
}

// saslStep is one client's sasl_ssl check: it produces n records to topic
// over s and consumes them back, and returns the cell.
type saslStep func(ctx context.Context, root string, s *secureListener, topic string, n int) Result

// runSaslStep fills the sasl_ssl cell of rep with the client's step; it
// stays "—" without a SASL_SSL listener (a broker given with -broker) or
// without a step in the runner for the client (a note says so).
func runSaslStep(ctx context.Context, root string, s *secureListener, c client, prefix string, count int, rep *Report) {
	if s == nil {
		return
	}
	if c.sasl == nil {
		rep.Notes = append(rep.Notes, "sasl_ssl: not checked (the runner has no SASL_SSL step for this client yet)")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	rep.Results[saslFeature] = c.sasl(cctx, root, s, prefix+"-sasl", saslCount(count))
}
