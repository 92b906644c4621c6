package groups

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// samsaGroup runs `samsa group ARGS... --bootstrap-server addr` and
// returns its standard output; it fails t on a non-zero exit unless
// wantFail.
func samsaGroup(t *testing.T, addr string, wantFail bool, args ...string) string {
	t.Helper()
	bin, err := testkit.SamsaBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(append([]string{"group"}, args...), "--bootstrap-server", addr)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if (err != nil) != wantFail {
		t.Fatalf("samsa group %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

type describedJSON struct {
	Group    string `json:"group"`
	State    string `json:"state"`
	TotalLag int64  `json:"total_lag"`
	Members  []struct {
		MemberID   string `json:"member_id"`
		Assignment []struct {
			Topic      string  `json:"topic"`
			Partitions []int32 `json:"partitions"`
		} `json:"assignment"`
	} `json:"members"`
	Offsets []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Committed int64  `json:"committed"`
		End       int64  `json:"log_end"`
		Lag       int64  `json:"lag"`
	} `json:"offsets"`
}

func describeJSON(t *testing.T, addr, group string) describedJSON {
	t.Helper()
	var out []describedJSON
	if err := json.Unmarshal([]byte(samsaGroup(t, addr, false, "describe", group, "-o", "json")), &out); err != nil || len(out) != 1 {
		t.Fatalf("describe %s: %v (%d groups)", group, err, len(out))
	}
	return out[0]
}

// The CLI against a live group: list and describe show the member, its
// assignment and the lag; reset-offsets is a dry run until --execute and
// refuses an active group; delete removes an empty group.
func TestSamsaGroupCommand(t *testing.T) {
	b := sharedBroker(t)
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, 2)
	produce(t, b.Addr(), topic, 0, 100)

	// A member that consumes 60 records, commits them and stays.
	cl := client(t, b.Addr(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit())
	got := 0
	for got < 60 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		fs := cl.PollRecords(ctx, 60-got)
		expired := ctx.Err() != nil
		cancel()
		var rs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) { rs = append(rs, r) })
		if len(rs) == 0 && (fs.IsClientClosed() || expired) {
			t.Fatalf("consumed %d of 60", got)
		}
		got += len(rs)
		if err := cl.CommitRecords(deadline(t, 10*time.Second), rs...); err != nil {
			t.Fatal(err)
		}
	}
	if out := samsaGroup(t, b.Addr(), false, "list"); !strings.Contains(out, group) || !strings.Contains(out, "Stable") {
		t.Errorf("group list lacks %s Stable:\n%s", group, out)
	}
	d := describeJSON(t, b.Addr(), group)
	if d.State != "Stable" || len(d.Members) != 1 || len(d.Members[0].Assignment) != 1 || len(d.Members[0].Assignment[0].Partitions) != 2 {
		t.Errorf("describe: %+v, want Stable with one member holding both partitions", d)
	}
	if d.TotalLag != 40 {
		t.Errorf("describe: total lag %d, want 40", d.TotalLag)
	}
	samsaGroup(t, b.Addr(), true, "reset-offsets", group, "--to-earliest", "--execute") // active group: refused
	cl.Close()                                                                          // leaves: the group is Empty

	if out := samsaGroup(t, b.Addr(), false, "list", "--state", "Stable"); strings.Contains(out, group) {
		t.Errorf("list --state Stable shows the empty group:\n%s", out)
	}
	if out := samsaGroup(t, b.Addr(), false, "list", "--state", "Empty"); !strings.Contains(out, group) {
		t.Errorf("list --state Empty lacks the group:\n%s", out)
	}
	plan := samsaGroup(t, b.Addr(), false, "reset-offsets", group, "--to-earliest")
	if !strings.Contains(plan, "Dry run") {
		t.Errorf("reset-offsets without --execute does not say it is a dry run:\n%s", plan)
	}
	if d := describeJSON(t, b.Addr(), group); d.TotalLag != 40 {
		t.Errorf("a dry run changed the offsets: total lag %d", d.TotalLag)
	}
	samsaGroup(t, b.Addr(), false, "reset-offsets", group, "--to-earliest", "--execute")
	if d := describeJSON(t, b.Addr(), group); d.TotalLag != 100 || d.State != "Empty" {
		t.Errorf("after --to-earliest: %s with total lag %d, want Empty with 100", d.State, d.TotalLag)
	}
	samsaGroup(t, b.Addr(), false, "reset-offsets", group, "--shift-by", "10", "--execute", "--topic", topic)
	if d := describeJSON(t, b.Addr(), group); d.TotalLag != 80 {
		t.Errorf("after --shift-by 10 on two partitions: total lag %d, want 80", d.TotalLag)
	}
	samsaGroup(t, b.Addr(), false, "delete", group)
	if out := samsaGroup(t, b.Addr(), false, "list"); strings.Contains(out, group) {
		t.Errorf("deleted group still listed:\n%s", out)
	}
	samsaGroup(t, b.Addr(), true, "delete", group) // GROUP_ID_NOT_FOUND now
}
