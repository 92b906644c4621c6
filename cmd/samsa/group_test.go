package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestResetPlanTargets(t *testing.T) {
	cases := []struct {
		name                string
		plan                resetPlan
		current, start, end int64
		want                int64
	}{
		{"earliest", resetPlan{toEarliest: true, toOffset: -1}, 50, 10, 100, 10},
		{"latest", resetPlan{toLatest: true, toOffset: -1}, 50, 10, 100, 100},
		{"offset", resetPlan{toOffset: 42}, 50, 10, 100, 42},
		{"offset below start is clamped", resetPlan{toOffset: 3}, 50, 10, 100, 10},
		{"offset past end is clamped", resetPlan{toOffset: 300}, 50, 10, 100, 100},
		{"shift back", resetPlan{shift: true, shiftBy: -20, toOffset: -1}, 50, 10, 100, 30},
		{"shift without a commit starts at the log start", resetPlan{shift: true, shiftBy: 5, toOffset: -1}, -1, 10, 100, 15},
		{"shift past the end", resetPlan{shift: true, shiftBy: 500, toOffset: -1}, 50, 10, 100, 100},
	}
	for _, c := range cases {
		if got := c.plan.target(c.current, c.start, c.end); got != c.want {
			t.Errorf("%s: target %d, want %d", c.name, got, c.want)
		}
	}
	if err := (resetPlan{toOffset: -1}).validate(); err == nil {
		t.Error("a plan with no target validated")
	}
	if err := (resetPlan{toEarliest: true, toLatest: true, toOffset: -1}).validate(); err == nil {
		t.Error("a plan with two targets validated")
	}
}

func TestGroupDescribeTable(t *testing.T) {
	v := groupView{Group: "g", State: "Stable", ProtocolType: "consumer", Protocol: "range", Coordinator: 1,
		Members: []groupMemberView{{MemberID: "m-1", ClientID: "c", ClientHost: "/127.0.0.1",
			Assignment: []topicPartitionsView{{Topic: "t", Partitions: []int32{0, 1}}}}},
		Offsets: []groupOffsetView{{Topic: "t", Partition: 0, Committed: 5, End: 9, Lag: 4, Member: "m-1"},
			{Topic: "t", Partition: 1, Committed: -1, End: 3, Lag: -1, Member: "m-1"}},
		TotalLag: 4}
	var buf bytes.Buffer
	if err := writeGroupDescriptions(&buf, formatTable, []groupView{v}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Group g: Stable, consumer/range, coordinator 1, 1 member(s), total lag 4",
		"t:0,1", "m-1", "/127.0.0.1"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	var p0, p1 string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 6 && f[0] == "t" && f[1] == "0" {
			p0 = strings.Join(f[2:5], " ")
		}
		if len(f) >= 6 && f[0] == "t" && f[1] == "1" {
			p1 = strings.Join(f[2:5], " ")
		}
	}
	if p0 != "5 9 4" || p1 != "- 3 -" {
		t.Errorf("partition rows: %q and %q, want \"5 9 4\" and \"- 3 -\":\n%s", p0, p1, out)
	}
}
