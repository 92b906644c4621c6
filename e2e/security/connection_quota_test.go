package security

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/testkit"
)

// A connection_creation_rate set on an ip entity with AlterClientQuotas
// (KIP-612) refuses that address's connections over the rate, as Kafka
// does: held unanswered, then closed; they are not counted, and other
// addresses are served.
func TestConnectionCreationRatePerIP(t *testing.T) {
	b := testkit.StartInProcess(t)
	adm := kadm.NewClient(client(t, b.Addr, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	limited := "127.0.0.2"
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: []kadm.ClientQuotaEntityComponent{{Type: "ip", Name: &limited}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 2}},
	}})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, res)
	}
	desc, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "ip", MatchName: &limited, MatchType: 0}})
	if err != nil || len(desc) != 1 || len(desc[0].Values) != 1 || desc[0].Values[0].Key != "connection_creation_rate" || desc[0].Values[0].Value != 2 {
		t.Fatalf("describe: %v %+v", err, desc)
	}

	// 2/s over the 10 s a new rate spans: about 20 at once are served,
	// then the address is refused.
	answered, refused := 0, 0
	for range 24 {
		if testkit.Answered(t, b.Addr, limited) {
			answered++
		} else {
			refused++
		}
	}
	if answered == 0 || refused == 0 {
		t.Fatalf("%d of 24 connections from %s answered: want some answered, then the rest refused", answered, limited)
	}
	if st := b.Server.Stats(); st.ConnectionsThrottled != uint64(refused) {
		t.Fatalf("%d connections refused, the listener counted %d", refused, st.ConnectionsThrottled)
	}
	if !testkit.Answered(t, b.Addr, "127.0.0.3") {
		t.Fatal("127.0.0.3, which has no quota, was refused")
	}
}

// listener.name.<l>.max.connection.creation.rate holds the listener's
// accepting over the rate: every connection is served, the later ones
// after a wait.
func TestListenerConnectionCreationRate(t *testing.T) {
	b := testkit.StartInProcess(t, "listener.name.plaintext.max.connection.creation.rate", "5")
	// 5/s over 10 s admits 50 at once; the next three wait.
	for i := range 53 {
		if !testkit.Answered(t, b.Addr, "127.0.0.1") {
			t.Fatalf("connection %d was not served", i+1)
		}
	}
	if st := b.Server.Stats(); st.AcceptThrottles == 0 || st.ConnectionsThrottled != 0 {
		t.Fatalf("stats %+v: want the listener held, no connection refused", st)
	}
}
