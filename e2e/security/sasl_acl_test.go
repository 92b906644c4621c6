package security

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// SASL gives ACLs their principals: with the authorizer on, the SCRAM
// credential APIs need ALTER (and DESCRIBE) on the cluster, which the
// super user admin has and alice, authenticated as User:alice, has not.
func TestScramCredentialAPIsAuthorized(t *testing.T) {
	b := startSASLBroker(t, "authorizer.class.name", aclAuthorizer, "super.users", "User:admin")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	alice := kadm.NewClient(client(t, b.saslAddr(), plainMech(aliceUser, alicePass)))
	res, err := alice.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "mallory", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "x"}})
	if err == nil {
		err = res.Error()
	}
	if !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("alice altering credentials: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}
	if _, err := alice.DescribeUserSCRAMs(ctx); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("alice describing credentials: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}

	createScramUser(t, b.saslAddr(), plainMech(adminUser, adminPass), "SCRAM-SHA-256", "grace", "grace-secret")
	described, err := kadm.NewClient(client(t, b.saslAddr(), plainMech(adminUser, adminPass))).DescribeUserSCRAMs(ctx)
	if err != nil || described["grace"].Err != nil || described["mallory"].User != "" {
		t.Fatalf("admin describing credentials: %+v %v, want grace and no mallory", described, err)
	}
}
