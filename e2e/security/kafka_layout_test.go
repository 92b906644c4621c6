package security

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/zkmeta"
)

// TestKafkaWritesWhatSamsaWrites creates ACLs through Apache Kafka 3.9.1
// (ZooKeeper mode, AclAuthorizer) and checks that the znodes it writes
// are byte for byte what samsa writes for the same ACLs, resources and
// change notifications alike, and that samsa's store loads them into the
// same decisions: the two share one cluster's ACLs.
func TestKafkaWritesWhatSamsaWrites(t *testing.T) {
	testkit.RequireKafka39(t)
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Kafka39, Brokers: 1, Properties: map[string]string{
		"authorizer.class.name": aclAuthorizer, "allow.everyone.if.no.acl.found": "true"}})
	ctx := deadline(t, 3*time.Minute)
	adm := newAdmin(t, c.Bootstrap())
	for _, b := range []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("orders").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral),
		kadm.NewACLs().Deny("User:bob").DenyHosts("10.0.0.1").Topics("logs-").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternPrefixed),
		kadm.NewACLs().Allow("User:carol").AllowHosts("*").TransactionalIDs("tx").Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral),
	} {
		res, err := adm.CreateACLs(ctx, b)
		if err != nil || len(res) != 1 || res[0].Err != nil {
			t.Fatalf("Kafka CreateACLs: %v %+v", err, res)
		}
	}

	conn := c.ZooKeeperConn()
	get := func(p string) string {
		t.Helper()
		data, _, err := conn.Get(c.ZKPath(p))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return string(data)
	}
	entries := map[string]acl.Entry{
		"/kafka-acl/Topic/orders":                  {Principal: "User:alice", Host: "*", Op: acl.OpRead, Perm: acl.PermAllow},
		"/kafka-acl-extended/prefixed/Topic/logs-": {Principal: "User:bob", Host: "10.0.0.1", Op: acl.OpWrite, Perm: acl.PermDeny},
		"/kafka-acl/TransactionalId/tx":            {Principal: "User:carol", Host: "*", Op: acl.OpDescribe, Perm: acl.PermAllow},
	}
	for p, e := range entries {
		if got, want := get(p), string(acl.EncodeEntries([]acl.Entry{e})); got != want {
			t.Errorf("%s: Kafka wrote %s, samsa writes %s", p, got, want)
		}
	}
	changes := map[string]zkmeta.ACLResource{
		"/kafka-acl-changes/acl_changes_0000000000":          {Type: "Topic", Name: "orders"},
		"/kafka-acl-extended-changes/acl_changes_0000000000": {Type: "Topic", Name: "logs-", Prefixed: true},
		"/kafka-acl-changes/acl_changes_0000000001":          {Type: "TransactionalId", Name: "tx"},
	}
	for p, r := range changes {
		if got, want := get(p), string(zkmeta.EncodeACLChange(r)); got != want {
			t.Errorf("%s: Kafka wrote %s, samsa writes %s", p, got, want)
		}
	}

	zctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	zc, err := zkmeta.Connect(zctx, zkmeta.Config{Connect: c.ZooKeeperConnect()})
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	a, err := acl.New(acl.Rules{}, acl.NewZKStore(zc), nil, nil)
	if err != nil {
		t.Fatalf("samsa loads Kafka's ACLs: %v", err)
	}
	if n := a.State().Len(); n != 3 {
		t.Errorf("samsa loaded %d bindings, want 3", n)
	}
	for _, c := range []struct {
		principal, addr string
		op              acl.Operation
		typ             acl.ResourceType
		name            string
		want            bool
	}{
		{"User:alice", "1.2.3.4:1", acl.OpRead, acl.ResourceTopic, "orders", true},
		{"User:bob", "10.0.0.1:1", acl.OpWrite, acl.ResourceTopic, "logs-app", false},
		{"User:carol", "1.2.3.4:1", acl.OpDescribe, acl.ResourceTransactionalID, "tx", true},
		{"User:alice", "1.2.3.4:1", acl.OpWrite, acl.ResourceTopic, "orders", false},
	} {
		if got := a.Authorize(c.principal, c.addr, c.op, c.typ, c.name); got != c.want {
			t.Errorf("%s %s %s %q: %v, want %v", c.principal, c.op, c.typ, c.name, got, c.want)
		}
	}
}
