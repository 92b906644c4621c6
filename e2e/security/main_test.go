package security

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// aclAuthorizer is the authorizer.class.name of Kafka's ZooKeeper mode,
// which turns samsa's authorizer on.
const aclAuthorizer = "kafka.security.authorizer.AclAuthorizer"

// authorizerArgs are the flags of a broker with ACLs on; extra adds more.
func authorizerArgs(extra ...string) []string {
	return append([]string{"--authorizer.class.name", aclAuthorizer, "--group.initial.rebalance.delay.ms", "0"}, extra...)
}

// newClient returns a franz-go client for addr, closed when t ends.
func newClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return testkit.NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("samsa-security"),
		kgo.RetryTimeout(5 * time.Second)}, opts...)...)
}

// newAdmin returns an admin client for addr.
func newAdmin(t testing.TB, addr string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(newClient(t, addr))
}

// deadline is a context for one step of a test.
func deadline(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
