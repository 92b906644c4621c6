package security

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// The scenario on Java kafka-clients: over SASL_SSL (a PEM
// truststore holding the test CA, SCRAM-SHA-512) alice produces to and
// consumes in group g from topic a, is refused topic b with
// TopicAuthorizationException, and a wrong password gets
// SaslAuthenticationException (io.samsa.interop.SaslSsl checks the
// exception classes; it prints OK only when all three hold).
func TestJavaSASLSSLUnderACLs(t *testing.T) {
	cp := testkit.InteropJava(t)
	b := startSecureBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	op := b.topicsAndAlice(ctx, t)
	allowAlice(ctx, t, op, "g", "a")
	ca := b.ca.WritePEM(t, t.TempDir(), "ca.pem")

	t.Log(javaSASLSSLACL(ctx, t, cp, b.secureAddr(t), ca))

	// The group's commit landed: the operator sees g at a's end.
	offs, err := op.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("a", 0); !ok || o.At != 20 {
		t.Fatalf("group g's committed offset on a/0: %+v (found %v), want 20", o, ok)
	}
	if len(b.log.Matching("SASL authentication failed", "user=alice")) == 0 {
		t.Errorf("no log line for alice's failed login")
	}
}

// javaSASLSSLACL runs io.samsa.interop.Main's sasl-ssl-acl scenario as
// alice (SCRAM-SHA-512) against bootstrap over SASL_SSL trusting caFile:
// 20 records to topic a and back in group g, topic b refused, a wrong
// password refused. It returns the program's OK line.
func javaSASLSSLACL(ctx context.Context, t *testing.T, cp, bootstrap, caFile string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "java", "-Xmx256m", "-cp", cp, "io.samsa.interop.Main", "sasl-ssl-acl",
		bootstrap, "a", "b", "20", "g", caFile, "SCRAM-SHA-512", aliceUser, alicePass)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := strings.TrimSpace(stdout.String())
	if err != nil || !strings.HasPrefix(out, "OK") {
		t.Fatalf("java sasl-ssl-acl: %v\nstdout:\n%s\nstderr (end):\n%s", err, out, testkit.LastLines(stderr.String(), 60))
	}
	return out
}
