package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// runCLI runs the samsa command line with stdin and returns what it
// printed on stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// mustCLI is runCLI for a command that must succeed.
func mustCLI(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := runCLI(t, stdin, args...)
	if err != nil {
		t.Fatalf("samsa %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestProduceConsumeAgainstABroker drives `samsa produce` and `samsa
// consume` against a real broker: keys, headers, partitions, templates,
// JSON, relative offsets, counts and a consumer group.
func TestProduceConsumeAgainstABroker(t *testing.T) {
	b := testkit.StartInProcess(t)
	adm, _ := b.Admin(t)
	checkProduceConsume(t, b.Addr, adm)
	_, _, err := runCLI(t, "", "consume", "missing", "-b", b.Addr, "-e")
	if err == nil || !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("consume of a topic that does not exist: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
}

// TestCLIAgainstApacheKafka runs the same checks, timestamps, isolation,
// `samsa cluster` and `samsa txn` against Apache Kafka 3.9.1: the verbs are Kafka
// clients, not samsa's.
func TestCLIAgainstApacheKafka(t *testing.T) {
	testkit.RequireKafka39(t)
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Kafka39, Brokers: 1})
	cl := testkit.NewClient(t, kgo.SeedBrokers(c.Bootstrap()))
	adm := kadm.NewClient(cl)
	checkProduceConsume(t, c.Bootstrap(), adm)
	checkTimestampsAndIsolation(t, c.Bootstrap(), adm, cl)
	checkCluster(t, c.Bootstrap(), 1, adm)
	checkTxnCommands(t, c.Bootstrap(), adm)
}

// checkProduceConsume is TestProduceConsumeAgainstABroker against the
// broker at addr.
func checkProduceConsume(t *testing.T, addr string, adm *kadm.Client) {
	t.Helper()
	b := struct{ Addr string }{addr}
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "cli"); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	var want []string
	for i := range 10 {
		fmt.Fprintf(&in, "k%d:v%d\n", i, i)
		want = append(want, fmt.Sprintf("k%d=v%d|src=cli,n=1", i, i))
	}
	_, errOut, err := runCLI(t, in.String(), "produce", "cli", "-b", b.Addr, "-K", ":", "-H", "src=cli", "-H", "n=1")
	if err != nil || !strings.Contains(errOut, "10 records produced to cli") {
		t.Fatalf("produce: %v %q", err, errOut)
	}

	got := lines(mustCLI(t, "", "consume", "cli", "-b", b.Addr, "-e", "-f", `%k=%s|%h\n`))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("consume -e printed %q, want %q", got, want)
	}

	// -p: one partition, as many lines as its end offset says.
	ends, err := adm.ListEndOffsets(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	end0, _ := ends.Lookup("cli", 0)
	got = lines(mustCLI(t, "", "consume", "cli", "-b", b.Addr, "-p", "0", "-e", "-f", `%t/%p\n`))
	if int64(len(got)) != end0.Offset || slices.ContainsFunc(got, func(l string) bool { return l != "cli/0" }) {
		t.Errorf("consume -p 0 printed %q, want %d lines cli/0", got, end0.Offset)
	}

	// -p on produce, -o -N relative to the end.
	mustCLI(t, "x\ny\n", "produce", "cli", "-b", b.Addr, "-p", "1", "-q")
	if got := mustCLI(t, "", "consume", "cli", "-b", b.Addr, "-p", "1", "-o", "-2", "-e"); got != "x\ny\n" {
		t.Errorf("consume -p 1 -o -2 -e printed %q, want x and y", got)
	}

	// -J: kcat's envelope; a record produced without a key has a null one.
	js := lines(mustCLI(t, "", "consume", "cli", "-b", b.Addr, "-p", "1", "-o", "-1", "-c", "1", "-J"))
	if len(js) != 1 {
		t.Fatalf("consume -J -c 1 printed %d lines", len(js))
	}
	var env struct {
		Topic     string  `json:"topic"`
		Partition int32   `json:"partition"`
		Offset    int64   `json:"offset"`
		Key       *string `json:"key"`
		Payload   *string `json:"payload"`
	}
	if err := json.Unmarshal([]byte(js[0]), &env); err != nil {
		t.Fatal(err)
	}
	end1, _ := ends.Lookup("cli", 1)
	if env.Topic != "cli" || env.Partition != 1 || env.Offset != end1.Offset+1 || env.Key != nil || env.Payload == nil || *env.Payload != "y" {
		t.Errorf("consume -J printed %s", js[0])
	}

	// -c: exactly that many.
	if got := lines(mustCLI(t, "", "consume", "cli", "-b", b.Addr, "-c", "3")); len(got) != 3 {
		t.Errorf("consume -c 3 printed %d lines", len(got))
	}

	// -G: the group reads everything and commits it; read again, it
	// has nothing left.
	total := 12
	if got := lines(mustCLI(t, "", "consume", "cli", "-b", b.Addr, "-G", "cli-group", "-e")); len(got) != total {
		t.Errorf("consume -G printed %d lines, want %d", len(got), total)
	}
	offs, err := adm.FetchOffsets(ctx, "cli-group")
	if err != nil {
		t.Fatal(err)
	}
	var committed int64
	offs.Each(func(o kadm.OffsetResponse) { committed += o.At })
	if committed != int64(total) {
		t.Errorf("the group committed offsets summing to %d, want %d", committed, total)
	}
	if got := mustCLI(t, "", "consume", "cli", "-b", b.Addr, "-G", "cli-group", "-e"); got != "" {
		t.Errorf("the group read again what it had committed: %q", got)
	}
}

// TestConsumeByTimestampAndIsolation checks s@/e@ offsets by record
// timestamps and read_committed against transactions.
func TestConsumeByTimestampAndIsolation(t *testing.T) {
	b := testkit.StartInProcess(t)
	adm, cl := b.Admin(t)
	checkTimestampsAndIsolation(t, b.Addr, adm, cl)
}

// checkTimestampsAndIsolation is TestConsumeByTimestampAndIsolation
// against the broker at addr, with cl a client of it.
func checkTimestampsAndIsolation(t *testing.T, addr string, adm *kadm.Client, cl *kgo.Client) {
	t.Helper()
	b := struct{ Addr string }{addr}
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "timed"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		r := &kgo.Record{Topic: "timed", Value: []byte(fmt.Sprintf("r%d", i)), Timestamp: time.UnixMilli(int64(i+1) * 1000)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustCLI(t, "", "consume", "timed", "-b", b.Addr, "-o", "s@2500", "-o", "e@4500"); got != "r2\nr3\n" {
		t.Errorf("consume -o s@2500 -o e@4500 printed %q, want r2 and r3", got)
	}
	if got := mustCLI(t, "", "consume", "timed", "-b", b.Addr, "-o", "3", "-e", "-f", `%o:%s@%T\n`); got != "3:r3@4000\n4:r4@5000\n" {
		t.Errorf("consume -o 3 -e printed %q", got)
	}

	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "txn"); err != nil {
		t.Fatal(err)
	}
	tx := testkit.NewClient(t, kgo.SeedBrokers(addr), kgo.TransactionalID("cli-txn"), kgo.DefaultProduceTopic("txn"))
	for _, c := range []struct {
		value  string
		commit kgo.TransactionEndTry
	}{{"aborted", kgo.TryAbort}, {"committed", kgo.TryCommit}} {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := tx.ProduceSync(ctx, kgo.StringRecord(c.value)).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := tx.EndTransaction(ctx, c.commit); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustCLI(t, "", "consume", "txn", "-b", b.Addr, "-e", "--isolation", "read_committed"); got != "committed\n" {
		t.Errorf("read_committed -e printed %q, want only the committed record", got)
	}
	if got := mustCLI(t, "", "consume", "txn", "-b", b.Addr, "-e"); got != "aborted\ncommitted\n" {
		t.Errorf("read_uncommitted -e printed %q, want both records", got)
	}
}

// TestClusterCommand checks `samsa cluster` against a real broker.
func TestClusterCommand(t *testing.T) {
	b := testkit.StartInProcess(t, "broker.id", "7")
	adm, _ := b.Admin(t)
	checkCluster(t, b.Addr, 7, adm)
}

// checkCluster checks `samsa cluster` against the one broker at addr,
// whose id is id.
func checkCluster(t *testing.T, addr string, id int32, adm *kadm.Client) {
	t.Helper()
	if _, err := adm.CreateTopic(context.Background(), 2, 1, nil, "c"); err != nil {
		t.Fatal(err)
	}
	var v clusterView
	if err := json.Unmarshal([]byte(mustCLI(t, "", "cluster", "--bootstrap-server", addr, "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Controller != id || len(v.Brokers) != 1 || v.Brokers[0].ID != id || v.Topics < 1 || v.Partitions < 2 ||
		len(v.UnderReplicated) != 0 || len(v.Offline) != 0 || v.ClusterID == "" {
		t.Errorf("cluster -o json = %+v", v)
	}
	table := mustCLI(t, "", "cluster", "--bootstrap-server", addr)
	for _, want := range []string{fmt.Sprintf("controller %d", id), "Under-replicated partitions: 0", "Offline partitions: 0"} {
		if !strings.Contains(table, want) {
			t.Errorf("cluster table lacks %q:\n%s", want, table)
		}
	}
}

// Bad flags fail before any connection is tried.
func TestProduceConsumeRejectBadInputOffline(t *testing.T) {
	for _, args := range [][]string{
		{"consume", "t", "-o", "sometime"},
		{"consume", "t", "-o", "1", "-o", "2"},
		{"consume", "t", "-f", "%x"},
		{"consume", "t", "-J", "-f", "%s"},
		{"consume", "t", "-G", "g", "-p", "0"},
		{"consume", "t", "-o", "stored"},
		{"consume", "t", "--isolation", "dirty"},
		{"produce", "t", "-H", "novalue"},
		{"produce", "t", "--acks", "2"},
		{"produce", "t", "-z", "brotli"},
	} {
		_, _, err := runCLI(t, "", append(args, "-b", "127.0.0.1:1")...)
		if err == nil {
			t.Errorf("%v: no error", args)
		} else if strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("%v: tried to connect before validating: %v", args, err)
		}
	}
}
