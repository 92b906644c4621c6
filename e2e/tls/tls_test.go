package tls

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors"
	"github.com/samsa-io/samsa/netloop"
	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire"
)

// principals wraps the broker as netloop's handler and records the
// principal of every request's connection.
type principals struct {
	*actors.Broker
	mu   sync.Mutex
	seen map[string]int
}

func (p *principals) Handle(req *wire.Request) {
	p.mu.Lock()
	p.seen[req.Session.Principal()]++
	p.mu.Unlock()
	p.Broker.Handle(req)
}

func (p *principals) count(principal string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[principal]
}

// sslBroker starts a broker whose one listener is SSL, with a PKCS12
// keystore, a PEM truststore and kv's other settings.
func sslBroker(t *testing.T, ca *tlstest.CA, p *principals, kv ...string) *testkit.InProcess {
	t.Helper()
	dir := t.TempDir()
	base := []string{
		"listeners", "SSL://127.0.0.1:0",
		"ssl.keystore.type", "PKCS12",
		"ssl.keystore.location", ca.Server(t).WritePKCS12(t, dir, "broker.p12", "changeit"),
		"ssl.keystore.password", "changeit",
		"ssl.truststore.type", "PEM",
		"ssl.truststore.location", ca.WritePEM(t, dir, "ca.pem"),
	}
	opts := testkit.InProcessOptions{}
	if p != nil {
		opts.Handler = func(b *actors.Broker) netloop.Handler { p.Broker = b; return p }
	}
	return testkit.StartInProcessWith(t, opts, append(base, kv...)...)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// franz-go produces and consumes over mutual TLS: 8 MiB of records, read
// back in fetches of up to 4 MiB that leave the broker by copy (no
// sendfile on TLS), every record intact and in order; every request
// carried the principal that ssl.principal.mapping.rules made of the
// client certificate's subject.
func TestFranzGoProducesAndConsumesOverMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t)
	p := &principals{seen: map[string]int{}}
	b := sslBroker(t, ca, p, "ssl.client.auth", "required",
		"ssl.principal.mapping.rules", "RULE:^CN=([^,]*),OU=eng,.*$/$1@eng/L,DEFAULT")
	alice := ca.Client(t, pkix.Name{CommonName: "Alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}})
	dial := kgo.DialTLSConfig(tlstest.ClientConfig(ca, alice))

	adm, _ := b.Admin(t, dial)
	if _, err := adm.CreateTopic(ctx(t), 1, 1, nil, "tls"); err != nil {
		t.Fatal(err)
	}
	const n, size = 8192, 1024
	data := make([]byte, n*size) // random, so compression cannot shrink it
	_, _ = rand.NewChaCha8([32]byte{1}).Read(data)
	value := func(i int) []byte { return data[i*size : (i+1)*size] }
	prod := b.Client(t, dial, kgo.DefaultProduceTopic("tls"), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: value(i)}
	}
	if err := prod.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	before := b.Server.Stats()
	cons := b.Client(t, dial, kgo.ConsumeTopics("tls"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(4<<20), kgo.FetchMaxPartitionBytes(4<<20))
	for got := 0; got < n; {
		fs := cons.PollFetches(ctx(t))
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != int64(got) || string(r.Key) != fmt.Sprint(got) || !bytes.Equal(r.Value, value(got)) {
				t.Fatalf("record %d: offset %d key %q", got, r.Offset, r.Key)
			}
			got++
		})
	}
	st := b.Server.Stats()
	if copied := st.BytesCopied - before.BytesCopied; copied < n*size || st.BytesSendfile != 0 {
		t.Fatalf("copied %d bytes of record data, sendfile %d; want at least %d copied and none by sendfile", copied, st.BytesSendfile, n*size)
	}
	if p.count("User:alice@eng") == 0 || p.count("User:ANONYMOUS") != 0 {
		t.Fatalf("principals seen: %v", p.seen)
	}
}

// A plaintext client on the SSL port gets nowhere, a client without a
// certificate is refused under ssl.client.auth=required, and the broker
// goes on serving a client with one.
func TestTLSRefusals(t *testing.T) {
	ca := tlstest.NewCA(t)
	b := sslBroker(t, ca, nil, "ssl.client.auth", "required")
	short := func() context.Context {
		c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		t.Cleanup(cancel)
		return c
	}
	plain := b.Client(t, kgo.RequestRetries(0))
	if err := plain.Ping(short()); err == nil {
		t.Fatal("a plaintext client was answered on the SSL port")
	}
	anon := b.Client(t, kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil)), kgo.RequestRetries(0))
	if err := anon.Ping(short()); err == nil {
		t.Fatal("a client without a certificate was answered under ssl.client.auth=required")
	}
	good := b.Client(t, kgo.DialTLSConfig(tlstest.ClientConfig(ca, ca.Client(t, pkix.Name{CommonName: "bob"}))))
	if err := good.Ping(ctx(t)); err != nil {
		t.Fatalf("a client with a certificate: %v", err)
	}
	if st := b.Server.Stats(); st.TLSHandshakeFailures < 2 {
		t.Fatalf("handshake failures %d, want at least 2", st.TLSHandshakeFailures)
	}
}

// Kafka's dynamic keystore update: AlterConfigs of
// listener.name.<listener>.ssl.keystore.location on the broker has the
// listener read its keystore again; the next handshake gets the new
// certificate, without a restart. A keystore that cannot be read is
// refused with INVALID_CONFIG before it is stored, as Kafka validates it;
// the listener keeps the certificate it has, and the stored setting the
// good one.
func TestKeystoreReloadThroughAlterConfigs(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	first, second := ca.Server(t), ca.Server(t)
	renamed := ca.Broker(t, pkix.Name{CommonName: "renamed"}) // another subject, the same host names
	b := testkit.StartInProcess(t, "listeners", "SSL://127.0.0.1:0",
		"ssl.keystore.type", "PEM", "ssl.keystore.location", first.WritePEM(t, dir, "first.pem"))
	served := func() *tlstest.Cert {
		t.Helper()
		conn, err := tls.Dial("tcp", b.Addr, tlstest.ClientConfig(ca, nil))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		leaf := conn.ConnectionState().PeerCertificates[0]
		switch {
		case leaf.Equal(first.Leaf):
			return first
		case leaf.Equal(second.Leaf):
			return second
		case leaf.Equal(renamed.Leaf):
			return renamed
		}
		t.Fatal("the broker serves a certificate it was never given")
		return nil
	}
	if served() != first {
		t.Fatal("not the first certificate")
	}
	adm, _ := b.Admin(t, kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil)))
	const key = "listener.name.ssl.ssl.keystore.location"
	set := func(path string) error {
		t.Helper()
		res, err := adm.AlterBrokerConfigs(ctx(t), []kadm.AlterConfig{{Name: key, Value: &path}}, 0)
		if err == nil && res[0].Err != nil {
			err = fmt.Errorf("%w: %s", res[0].Err, res[0].ErrMessage)
		}
		return err
	}
	secondPath := second.WritePEM(t, dir, "second.pem")
	if err := set(secondPath); err != nil {
		t.Fatal(err)
	}
	if served() != second {
		t.Fatal("the new keystore is not served after AlterConfigs")
	}
	notAKeystore := filepath.Join(dir, "ca.pem")
	ca.WritePEM(t, dir, "ca.pem") // a certificate without its key
	for _, bad := range []string{filepath.Join(dir, "missing.pem"), notAKeystore} {
		if err := set(bad); !errors.Is(err, kerr.InvalidConfig) {
			t.Fatalf("keystore %s: %v, want INVALID_CONFIG", bad, err)
		}
	}
	if served() != second {
		t.Fatal("an unreadable keystore replaced the certificate")
	}
	if got := storedBrokerConfig(ctx(t), t, adm, 0, key); got != secondPath {
		t.Fatalf("stored %s=%q, want %s", key, got, secondPath)
	}

	// Another subject is refused unless ssl.allow.dn.changes says so, as
	// in Kafka; the flag may come in the same request.
	renamedPath := renamed.WritePEM(t, dir, "renamed.pem")
	if err := set(renamedPath); !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(err.Error(), "ssl.allow.dn.changes") {
		t.Fatalf("a certificate of another subject: %v, want INVALID_CONFIG naming ssl.allow.dn.changes", err)
	}
	allow := "true"
	res, err := adm.AlterBrokerConfigs(ctx(t), []kadm.AlterConfig{{Name: key, Value: &renamedPath},
		{Name: "listener.name.ssl.ssl.allow.dn.changes", Value: &allow}}, 0)
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		t.Fatalf("with ssl.allow.dn.changes=true: %v", err)
	}
	if served() != renamed {
		t.Fatal("the renamed certificate is not served")
	}
}

// storedBrokerConfig is key's value as broker id describes its configs
// ("" when unset).
func storedBrokerConfig(ctx context.Context, t *testing.T, adm *kadm.Client, id int32, key string) string {
	t.Helper()
	rcs, err := adm.DescribeBrokerConfigs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(strconv.Itoa(int(id)), nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rc.Configs, func(c kadm.Config) bool { return c.Key == key })
	if i < 0 || rc.Configs[i].Value == nil {
		return ""
	}
	return *rc.Configs[i].Value
}
