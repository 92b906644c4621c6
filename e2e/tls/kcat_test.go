package tls

import (
	"context"
	"crypto/x509/pkix"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
)

// kcat (librdkafka) produces and consumes over mutual TLS with
// security.protocol=SSL, verifying the broker's certificate against the
// test CA; its principal is its certificate's subject.
func TestKcatOverMutualTLS(t *testing.T) {
	kcat := testkit.RequireTool(t, "kcat")
	ca := tlstest.NewCA(t)
	p := &principals{seen: map[string]int{}}
	b := sslBroker(t, ca, p, "ssl.client.auth", "required")
	dir := t.TempDir()
	carol := ca.Client(t, pkix.Name{CommonName: "carol", Organization: []string{"acme"}})
	keyPath := filepath.Join(dir, "carol.key")
	if err := os.WriteFile(keyPath, carol.KeyPEM(t), 0o600); err != nil {
		t.Fatal(err)
	}
	certPath := filepath.Join(dir, "carol.pem")
	if err := os.WriteFile(certPath, carol.ChainPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	ssl := []string{"-b", b.Addr, "-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + ca.WritePEM(t, dir, "ca.pem"),
		"-X", "ssl.certificate.location=" + certPath, "-X", "ssl.key.location=" + keyPath}
	lines := []string{"one", "two", "three"}
	runKcat(t, kcat, strings.Join(lines, "\n")+"\n", append(ssl, "-P", "-t", "kcat-tls")...)
	out := runKcat(t, kcat, "", append(ssl, "-C", "-t", "kcat-tls", "-o", "beginning", "-e", "-q")...)
	if got := strings.Fields(out); strings.Join(got, ",") != strings.Join(lines, ",") {
		t.Fatalf("consumed %q, want %q", got, lines)
	}
	if p.count("User:CN=carol,O=acme") == 0 {
		t.Fatalf("principals seen: %v", p.seen)
	}
}

func runKcat(t *testing.T, kcat, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}
