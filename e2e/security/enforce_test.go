package security

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// TestEnforcementOnAnonymousClients runs franz-go clients, all
// User:ANONYMOUS on a PLAINTEXT listener, against a broker with ACLs on,
// no super users and allow.everyone.if.no.acl.found false, where
// ANONYMOUS may write and read topic a, read group g and alter the
// cluster's ACLs: the producer and the group consumer work on a, topic b
// is refused and hidden, creating topics is refused, and removing the
// WRITE ACL stops the producer.
func TestEnforcementOnAnonymousClients(t *testing.T) {
	// Set up as a super user: the topics and the ACLs.
	dir := t.TempDir()
	setup := testkit.StartBroker(t, testkit.BrokerConfig{DataDir: dir, Args: authorizerArgs("--super.users", "User:ANONYMOUS")})
	adm := newAdmin(t, setup.Addr())
	ctx := deadline(t, 2*time.Minute)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "a", "b"); err != nil {
		t.Fatal(err)
	}
	anon := func() *kadm.ACLBuilder {
		return kadm.NewACLs().Allow("User:ANONYMOUS").AllowHosts("*").ResourcePatternType(kadm.ACLPatternLiteral)
	}
	for _, b := range []*kadm.ACLBuilder{
		anon().Topics("a").Operations(kadm.OpWrite, kadm.OpRead),
		anon().Groups("g").Operations(kadm.OpRead),
		anon().Clusters().Operations(kadm.OpAlter),
		anon().TransactionalIDs("tx-ok").Operations(kadm.OpWrite),
	} {
		res, err := adm.CreateACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("create ACL: %v", r.Err)
			}
		}
	}
	if err := setup.Stop(); err != nil {
		t.Fatal(err)
	}

	// The same data, without super users.
	br := testkit.StartBroker(t, testkit.BrokerConfig{DataDir: dir, Args: authorizerArgs()})
	addr := br.Addr()
	producer := newClient(t, addr, kgo.DefaultProduceTopic("a"))
	if err := producer.ProduceSync(ctx, kgo.StringRecord("allowed")).FirstErr(); err != nil {
		t.Fatalf("produce to a: %v", err)
	}
	err := newClient(t, addr).ProduceSync(ctx, &kgo.Record{Topic: "b", Value: []byte("denied")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce to b: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	txn := newClient(t, addr, kgo.TransactionalID("tx-ok"), kgo.DefaultProduceTopic("a"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, kgo.StringRecord("in a transaction")).FirstErr(); err != nil {
		t.Fatalf("transactional produce with WRITE on the transactional id: %v", err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit with WRITE on the transactional id: %v", err)
	}
	refused := newClient(t, addr, kgo.TransactionalID("tx-no"), kgo.DefaultProduceTopic("a"))
	// franz-go learns it at BeginTransaction or at the first produce,
	// as its producer id's fatal error (by text).
	if err = refused.BeginTransaction(); err == nil {
		err = refused.ProduceSync(ctx, kgo.StringRecord("never")).FirstErr()
	}
	if err == nil || !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) && !strings.Contains(err.Error(), "TRANSACTIONAL_ID_AUTHORIZATION_FAILED") {
		t.Fatalf("transactional produce without WRITE on the transactional id: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
	}

	consumer := newClient(t, addr, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("a"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fetches := consumer.PollRecords(ctx, 1)
	if errs := fetches.Errors(); len(errs) > 0 {
		t.Fatalf("consume a in group g: %v", errs)
	}
	if recs := fetches.Records(); len(recs) != 1 || string(recs[0].Value) != "allowed" {
		t.Fatalf("consume a in group g: %v", recs)
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit in group g: %v", err)
	}

	admin := newAdmin(t, addr)
	topics, err := admin.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !topics.Has("a") || topics.Has("b") {
		t.Errorf("metadata of all topics: %v, want a and not b", topics.Names())
	}
	created, err := admin.CreateTopics(ctx, 1, 1, nil, "c")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := created.On("c", nil); !errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
		t.Errorf("create topic c: %v, want TOPIC_AUTHORIZATION_FAILED", r.Err)
	}

	deleted, err := admin.DeleteACLs(ctx, anon().Topics("a").Operations(kadm.OpWrite))
	if err != nil || len(deleted) != 1 || deleted[0].Err != nil || len(deleted[0].Deleted) != 1 {
		t.Fatalf("delete the WRITE ACL: %v %+v", err, deleted)
	}
	err = newClient(t, addr, kgo.DefaultProduceTopic("a")).ProduceSync(ctx, kgo.StringRecord("late")).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) && !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("produce to a after its WRITE ACL went: %v, want an authorization error", err)
	}
	if out := br.Output(); !strings.Contains(out, "operation denied by ACLs") || !strings.Contains(out, "principal=User:ANONYMOUS") {
		t.Errorf("the broker logged no denial")
	}
}

// The broker's security log: exactly one line per failed authentication,
// naming the client's address, the mechanism and the user; denied
// operations at a bounded rate per principal and operation, so that a
// client retrying a denied request in a loop logs one line while another
// principal's denial is still logged.
func TestSecurityLogLines(t *testing.T) {
	b := startSASLBroker(t, "authorizer.class.name", aclAuthorizer, "super.users", "User:"+adminUser)
	createScramUser(t, b.saslAddr(), plainMech(adminUser, adminPass), "SCRAM-SHA-512", "carol", "carol-secret")

	failures := []struct{ mech, user string }{
		{"PLAIN", aliceUser}, {"PLAIN", aliceUser}, {"PLAIN", "nobody"}, {"SCRAM-SHA-512", "carol"}, {"SCRAM-SHA-256", "nobody"},
	}
	for _, f := range failures {
		mech := plainMech(f.user, "wrong")
		if f.mech != "PLAIN" {
			mech = scramMech(f.mech, f.user, "wrong")
		}
		if err := client(t, b.saslAddr(), mech).Ping(context.Background()); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("%s %s with a wrong password: %v, want SASL_AUTHENTICATION_FAILED", f.mech, f.user, err)
		}
	}
	if lines := b.log.Matching("SASL authentication failed"); len(lines) != len(failures) {
		t.Fatalf("%d failed-authentication lines for %d failures:\n%s", len(lines), len(failures), strings.Join(lines, "\n"))
	}
	for _, f := range failures {
		if len(b.log.Matching("SASL authentication failed", "client=127.0.0.1:", "mechanism="+f.mech, "user="+f.user)) == 0 {
			t.Errorf("no failed-authentication line names client, mechanism %s and user %s", f.mech, f.user)
		}
	}

	// Alice may do nothing: 50 CreateTopics in a row are all refused,
	// and logged once.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alice := kadm.NewClient(client(t, b.saslAddr(), plainMech(aliceUser, alicePass)))
	for i := range 50 {
		res, err := alice.CreateTopic(ctx, 1, 1, nil, "secret")
		if err == nil {
			err = res.Err
		}
		if !errors.Is(err, kerr.TopicAuthorizationFailed) && !errors.Is(err, kerr.ClusterAuthorizationFailed) {
			t.Fatalf("alice's CreateTopics %d: %v, want an authorization failure", i, err)
		}
	}
	aliceLines := b.log.Matching("operation denied by ACLs", "principal=User:alice", "resource=secret")
	if len(aliceLines) != 1 {
		t.Fatalf("%d denial lines for alice's 50 CreateTopics, want 1:\n%s", len(aliceLines), strings.Join(aliceLines, "\n"))
	}
	if !strings.Contains(aliceLines[0], "operation=Create") || !strings.Contains(aliceLines[0], "client=127.0.0.1:") {
		t.Errorf("alice's denial line %q", aliceLines[0])
	}
	carol := kadm.NewClient(client(t, b.saslAddr(), scramMech("SCRAM-SHA-512", "carol", "carol-secret")))
	if res, err := carol.CreateTopic(ctx, 1, 1, nil, "secret"); err == nil && res.Err == nil {
		t.Fatal("carol, without ACLs, created a topic")
	}
	if len(b.log.Matching("operation denied by ACLs", "principal=User:carol", "resource=secret")) != 1 {
		t.Fatalf("carol's denial was not logged after alice's; log:\n%s", strings.Join(b.log.Matching("operation denied"), "\n"))
	}
}
