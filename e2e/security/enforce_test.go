package security

import (
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
