package main

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// `samsa txn list` and `describe` against a broker with one committed
// transaction and one left open on partition 0 of a topic.
func TestTxnListAndDescribe(t *testing.T) {
	b := testkit.StartInProcess(t)
	adm, _ := b.Admin(t)
	checkTxnCommands(t, b.Addr, adm)
}

// checkTxnCommands is TestTxnListAndDescribe against the broker at addr.
func checkTxnCommands(t *testing.T, addr string, adm *kadm.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "tx"); err != nil {
		t.Fatal(err)
	}
	transact := func(id string, commit bool) {
		cl := testkit.NewClient(t, kgo.SeedBrokers(addr), kgo.TransactionalID(id), kgo.DefaultProduceTopic("tx"),
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
	if err := json.Unmarshal([]byte(mustCLI(t, "", "txn", "list", "--bootstrap-server", addr, "-o", "json")), &listed); err != nil {
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
	if err := json.Unmarshal([]byte(mustCLI(t, "", "txn", "describe", "tx-open", "--bootstrap-server", addr, "-o", "json")), &views); err != nil {
		t.Fatal(err)
	}
	if len(views) != 1 || views[0].State != "Ongoing" || !slices.Equal(views[0].Partitions, []string{"tx-0"}) || views[0].Started == "" {
		t.Errorf("txn describe tx-open = %+v, want Ongoing on tx-0 with a start time", views)
	}
	checkTxnAbort(ctx, t, addr, adm)

	out, _, err := runCLI(t, "", "txn", "describe", "tx-done", "nobody", "--bootstrap-server", addr)
	if err == nil || !strings.Contains(out, "CompleteCommit") || !strings.Contains(out, "nobody") {
		t.Errorf("describe of tx-done and an unknown id: %v\n%s", err, out)
	}
}

// checkTxnAbort aborts tx-open's hanging transaction on tx-0 by its start
// offset: the partition then has no open transaction, and a read_committed
// consumer reads to its end, skipping the aborted record.
func checkTxnAbort(ctx context.Context, t *testing.T, addr string, adm *kadm.Client) {
	t.Helper()
	tp := kadm.TopicsSet{"tx": {0: {}}}
	described, err := adm.DescribeProducers(ctx, tp)
	if err != nil {
		t.Fatal(err)
	}
	start := int64(-1)
	for _, p := range described["tx"].Partitions[0].ActiveProducers {
		if p.CurrentTxnStartOffset >= 0 {
			start = p.CurrentTxnStartOffset
		}
	}
	if start < 0 {
		t.Fatalf("no open transaction on tx-0: %+v", described)
	}
	if _, _, err := runCLI(t, "", "txn", "abort", "--topic", "tx", "--partition", "0", "--start-offset", strconv.FormatInt(start+100, 10),
		"--bootstrap-server", addr); err == nil || !strings.Contains(err.Error(), "no open transaction") {
		t.Errorf("abort at an offset where nothing begins: %v", err)
	}
	var aborted abortedTxn
	out := mustCLI(t, "", "txn", "abort", "--topic", "tx", "--partition", "0", "--start-offset", strconv.FormatInt(start, 10),
		"--bootstrap-server", addr, "-o", "json")
	if err := json.Unmarshal([]byte(out), &aborted); err != nil || aborted.StartOffset != start || aborted.ProducerID < 0 {
		t.Fatalf("txn abort printed %q (%v)", out, err)
	}
	described, err = adm.DescribeProducers(ctx, tp)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range described["tx"].Partitions[0].ActiveProducers {
		if p.CurrentTxnStartOffset >= 0 {
			t.Errorf("after abort, producer %d still has a transaction open from %d", p.ProducerID, p.CurrentTxnStartOffset)
		}
	}
	if got := mustCLI(t, "", "consume", "tx", "-b", addr, "-p", "0", "-e", "--isolation", "read_committed"); got != "tx-done\n" {
		t.Errorf("read_committed after abort = %q, want only the committed record", got)
	}
}
