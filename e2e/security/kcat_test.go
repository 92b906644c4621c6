package security

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// kcat runs kcat (librdkafka) with SASL_PLAINTEXT settings and input on
// stdin; it returns stdout and the error with stderr.
func kcat(t *testing.T, bin, input string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(input)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), &kcatError{err: err, stderr: stderr.String()}
	}
	return string(out), nil
}

type kcatError struct {
	err    error
	stderr string
}

func (e *kcatError) Error() string { return e.err.Error() + "\n" + e.stderr }

// librdkafka produces and consumes through the SASL listener with
// SCRAM-SHA-256 and PLAIN; a wrong password is refused.
func TestKcatSASL(t *testing.T) {
	bin := testkit.RequireTool(t, "kcat")
	b := startSASLBroker(t)
	createScramUser(t, b.saslAddr(), plainMech(adminUser, adminPass), "SCRAM-SHA-256", "erin", "erin-secret")
	auth := func(mech, user, pass string) []string {
		return []string{"-b", b.saslAddr(), "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=" + mech,
			"-X", "sasl.username=" + user, "-X", "sasl.password=" + pass}
	}
	for _, c := range []struct{ mech, user, pass string }{{"SCRAM-SHA-256", "erin", "erin-secret"}, {"PLAIN", aliceUser, alicePass}} {
		topic := "kcat-" + c.mech
		if out, err := kcat(t, bin, "one\ntwo\nthree\n", append(auth(c.mech, c.user, c.pass), "-P", "-t", topic)...); err != nil {
			t.Fatalf("%s produce: %v\n%s\nbroker log:\n%s", c.mech, err, out, strings.Join(b.log.Matching(), "\n"))
		}
		out, err := kcat(t, bin, "", append(auth(c.mech, c.user, c.pass), "-C", "-t", topic, "-o", "beginning", "-e", "-q")...)
		if err != nil {
			t.Fatalf("%s consume: %v", c.mech, err)
		}
		if out != "one\ntwo\nthree\n" {
			t.Fatalf("%s consumed %q", c.mech, out)
		}
	}
	_, err := kcat(t, bin, "", append(auth("SCRAM-SHA-256", "erin", "wrong"), "-L", "-m", "5")...)
	if err == nil || !strings.Contains(err.Error(), "Authentication failed") {
		t.Fatalf("wrong password: %v", err)
	}
}
