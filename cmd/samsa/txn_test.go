package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// `samsa txn list` and `describe` against a broker with one committed
// transaction and one left open on partition 0 of a topic.
func TestTxnListAndDescribe(t *testing.T) {
	b := testkit.StartInProcess(t)
	adm, _ := b.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "tx"); err != nil {
		t.Fatal(err)
	}
	transact := func(id string, commit bool) {
		cl := testkit.NewClient(t, kgo.SeedBrokers(b.Addr), kgo.TransactionalID(id), kgo.DefaultProduceTopic("tx"),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte(id)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		}
	}
	transact("tx-done", true)
	transact("tx-open", false)

	var listed []txnSummary
	if err := json.Unmarshal([]byte(mustCLI(t, "", "txn", "list", "--bootstrap-server", b.Addr, "-o", "json")), &listed); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, l := range listed {
		states[l.TransactionalID] = l.State
		if l.ProducerID < 0 {
			t.Errorf("listed %s without a producer id", l.TransactionalID)
		}
	}
	if states["tx-done"] != "CompleteCommit" || states["tx-open"] != "Ongoing" {
		t.Errorf("txn list states = %v, want tx-done CompleteCommit and tx-open Ongoing", states)
	}
	var views []txnView
	if err := json.Unmarshal([]byte(mustCLI(t, "", "txn", "describe", "tx-open", "--bootstrap-server", b.Addr, "-o", "json")), &views); err != nil {
		t.Fatal(err)
	}
	if len(views) != 1 || views[0].State != "Ongoing" || !slices.Equal(views[0].Partitions, []string{"tx-0"}) || views[0].Started == "" {
		t.Errorf("txn describe tx-open = %+v, want Ongoing on tx-0 with a start time", views)
	}
	out, _, err := runCLI(t, "", "txn", "describe", "tx-done", "nobody", "--bootstrap-server", b.Addr)
	if err == nil || !strings.Contains(out, "CompleteCommit") || !strings.Contains(out, "nobody") {
		t.Errorf("describe of tx-done and an unknown id: %v\n%s", err, out)
	}
}
