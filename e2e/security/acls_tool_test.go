package security

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/testkit"
)

// aclCommand is kafka-acls.sh's main class.
const aclCommand = "kafka.admin.AclCommand"

// TestAclsToolAndAdminClient manages ACLs with Kafka 3.9.1's
// kafka-acls.sh and franz-go's kadm against one broker (whose anonymous
// clients are super users, so they may), and checks that both see each
// other's ACLs and that the ACLs survive a restart.
func TestAclsToolAndAdminClient(t *testing.T) {
	k := testkit.RequireKafka39(t)
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: authorizerArgs("--super.users", "User:ANONYMOUS")})
	tool := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := k.Run(ctx, aclCommand, append([]string{"--bootstrap-server", b.Addr()}, args...)...)
		t.Logf("kafka-acls %s:\n%s", strings.Join(args, " "), out)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tool("--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe", "--topic", "orders", "--group", "billing")
	tool("--add", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.1", "--operation", "All", "--topic", "logs-", "--resource-pattern-type", "prefixed")

	adm := newAdmin(t, b.Addr())
	ctx := deadline(t, time.Minute)
	created, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:bob").AllowHosts("*").Topics("payments").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || len(created) != 1 || created[0].Err != nil {
		t.Fatalf("kadm CreateACLs: %v %+v", err, created)
	}
	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().Topics().Groups().Allow().Deny().AllowHosts().DenyHosts().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, d := range described {
		if d.Err != nil {
			t.Fatalf("describe: %v", d.Err)
		}
		for _, a := range d.Described {
			got[a.Type.String()+" "+a.Name+" "+a.Pattern.String()+" "+a.Principal+" "+a.Host+" "+a.Operation.String()+" "+a.Permission.String()] = true
		}
	}
	for _, want := range []string{
		"TOPIC orders LITERAL User:alice * READ ALLOW",
		"TOPIC orders LITERAL User:alice * DESCRIBE ALLOW",
		"GROUP billing LITERAL User:alice * READ ALLOW",
		"GROUP billing LITERAL User:alice * DESCRIBE ALLOW",
		"TOPIC logs- PREFIXED User:mallory 10.0.0.1 ALL DENY",
		"TOPIC payments LITERAL User:bob * WRITE ALLOW",
	} {
		if !got[want] {
			t.Errorf("kadm DescribeACLs lacks %q; has %v", want, got)
		}
	}
	if len(got) != 6 {
		t.Errorf("kadm DescribeACLs: %d bindings, want 6: %v", len(got), got)
	}

	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	out := tool("--list", "--topic", "payments")
	if !strings.Contains(out, "principal=User:bob, host=*, operation=WRITE, permissionType=ALLOW") {
		t.Errorf("after a restart kafka-acls --list lacks kadm's ACL")
	}
	out = tool("--list")
	for _, want := range []string{"name=orders, patternType=LITERAL", "name=logs-, patternType=PREFIXED", "name=billing, patternType=LITERAL",
		"principal=User:mallory, host=10.0.0.1, operation=ALL, permissionType=DENY"} {
		if !strings.Contains(out, want) {
			t.Errorf("after a restart kafka-acls --list lacks %q", want)
		}
	}

	tool("--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe", "--topic", "orders", "--group", "billing")
	deleted, err := newAdmin(t, b.Addr()).DeleteACLs(deadline(t, time.Minute), kadm.NewACLs().Topics("payments").Allow("User:bob").AllowHosts("*").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || len(deleted) != 1 || deleted[0].Err != nil || len(deleted[0].Deleted) != 1 {
		t.Fatalf("kadm DeleteACLs: %v %+v", err, deleted)
	}
	out = tool("--list")
	if strings.Contains(out, "User:alice") || strings.Contains(out, "User:bob") || !strings.Contains(out, "User:mallory") {
		t.Errorf("after removing alice's and bob's ACLs, --list shows:\n%s", out)
	}
}

// TestAclAPIsWithoutAuthorizer: a broker without authorizer.class.name
// (the default) answers the ACL APIs SECURITY_DISABLED, as Kafka does.
func TestAclAPIsWithoutAuthorizer(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	res, err := newAdmin(t, b.Addr()).DescribeACLs(deadline(t, time.Minute), kadm.NewACLs().Topics().Allow().AllowHosts().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny))
	if err != nil || len(res) != 1 || res[0].Err != kerr.SecurityDisabled {
		t.Fatalf("DescribeACLs without an authorizer: %v %+v, want SECURITY_DISABLED", err, res)
	}
}
