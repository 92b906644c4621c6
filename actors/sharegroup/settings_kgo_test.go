package sharegroup_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareGroupConfigsApply: a group's share.record.lock.duration.ms,
// share.heartbeat.interval.ms, share.session.timeout.ms and
// share.delivery.count.limit (IncrementalAlterConfigs on its GROUP
// resource) are what its members are told and held to; values outside
// the broker's group.share.min/max.* bounds are INVALID_CONFIG and
// change nothing.
func TestShareGroupConfigsApply(t *testing.T) {
	n := startWithTopic(t, "sc")
	_, cl := n.Admin(t)
	for _, bad := range [][2]string{
		{"share.record.lock.duration.ms", "1000"}, // below group.share.min.record.lock.duration.ms (15000)
		{"share.delivery.count.limit", "11"},      // above group.share.max.delivery.count.limit (10)
		{"share.heartbeat.interval.ms", "1000"},   // below group.share.min.heartbeat.interval.ms (5000)
		{"share.session.timeout.ms", "90000"},     // above group.share.max.session.timeout.ms (60000)
	} {
		err := setGroupConfigs(t, cl, "cfg", bad[0], bad[1])
		if !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(err.Error(), bad[0]) {
			t.Fatalf("%s=%s: %v, want INVALID_CONFIG naming it", bad[0], bad[1], err)
		}
	}
	if err := setGroupConfigs(t, cl, "cfg", "share.record.lock.duration.ms", "16000", "share.heartbeat.interval.ms", "6000",
		"share.session.timeout.ms", "50000", "share.delivery.count.limit", "2"); err != nil {
		t.Fatal(err)
	}

	m := join(t, n, "cfg", "m1", "sc")
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.Version = 1
	hb.GroupID, hb.MemberID, hb.MemberEpoch = "cfg", "m1", m.epoch
	hr, err := hb.RequestWith(ctxT(t), m.cl)
	if err != nil || hr.ErrorCode != 0 || hr.HeartbeatIntervalMillis != 6000 {
		t.Fatalf("heartbeat: %v %+v, want the group's 6000 ms interval", err, hr)
	}
	m.fetch(0, 100) // starts the share partition at the latest offset, 0
	produce(t, n, "sc", 0, 1)
	resp, err := m.fetchRequest(5*time.Second, 100).RequestWith(ctxT(t), m.cl)
	got := m.acquired(resp, err)
	if resp.AcquisitionLockTimeoutMillis != 16000 || !slices.Equal(got.offsets, []int64{0}) {
		t.Fatalf("fetch: lock timeout %d ms and %v, want the group's 16000 ms and offset 0", resp.AcquisitionLockTimeoutMillis, got.offsets)
	}
	// The group's delivery limit is 2 (the broker's is 5): released
	// twice, the record is archived.
	if again := m.fetch(5*time.Second, 100, ack{0, 0, 2}); !slices.Equal(again.offsets, []int64{0}) || again.deliveries[0] != 2 {
		t.Fatalf("after a release: %v (deliveries %v), want 0 delivered twice", again.offsets, again.deliveries)
	}
	if last := m.fetch(200*time.Millisecond, 100, ack{0, 0, 2}); len(last.offsets) != 0 {
		t.Fatalf("released at the group's delivery limit, yet delivered again: %v", last.offsets)
	}
}

// TestShareGroupByDuration: share.auto.offset.reset=by_duration:PT1H
// starts a new share partition at the first record at most an hour old.
func TestShareGroupByDuration(t *testing.T) {
	n := startWithTopic(t, "sd")
	_, cl := n.Admin(t)
	now := time.Now()
	p := n.Client(t, kgo.DefaultProduceTopic("sd"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	var rs []*kgo.Record
	for i, age := range []time.Duration{3 * time.Hour, 2 * time.Hour, 30 * time.Minute, time.Minute} {
		rs = append(rs, &kgo.Record{Value: []byte{byte('a' + i)}, Timestamp: now.Add(-age)})
	}
	if err := p.ProduceSync(ctxT(t), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := setGroupConfigs(t, cl, "hour", "share.auto.offset.reset", "by_duration:PT1H"); err != nil {
		t.Fatal(err)
	}
	m := join(t, n, "hour", "m1", "sd")
	if got := m.fetch(5*time.Second, 100); !slices.Equal(got.offsets, []int64{2, 3}) {
		t.Fatalf("by_duration:PT1H got %v, want 2-3 (the records of the last hour)", got.offsets)
	}
	if err := setGroupConfigs(t, cl, "day", "share.auto.offset.reset", "by_duration:P1D"); err != nil {
		t.Fatal(err)
	}
	d := join(t, n, "day", "m1", "sd")
	if got := d.fetch(5*time.Second, 100); !slices.Equal(got.offsets, []int64{0, 1, 2, 3}) {
		t.Fatalf("by_duration:P1D got %v, want 0-3", got.offsets)
	}
}

// TestShareGroupSessionTimeoutApplies: a member of a group whose
// share.session.timeout.ms is 2 s is expired once it stops
// heartbeating, while a member of a group on the broker's 45 s stays.
func TestShareGroupSessionTimeoutApplies(t *testing.T) {
	n := startWithTopic(t, "st", "group.share.min.session.timeout.ms", "1000", "group.share.min.heartbeat.interval.ms", "500")
	_, cl := n.Admin(t)
	if err := setGroupConfigs(t, cl, "short", "share.session.timeout.ms", "2000", "share.heartbeat.interval.ms", "1000"); err != nil {
		t.Fatal(err)
	}
	join(t, n, "short", "m1", "st")
	join(t, n, "long", "m1", "st")
	members := func() (short, long int) {
		d := kmsg.NewPtrShareGroupDescribeRequest()
		d.Version = 1
		d.GroupIDs = []string{"short", "long"}
		dr, err := d.RequestWith(ctxT(t), cl)
		if err != nil || len(dr.Groups) != 2 {
			t.Fatalf("describe: %v %+v", err, dr)
		}
		return len(dr.Groups[0].Members), len(dr.Groups[1].Members)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(20 * time.Second); ; <-tick.C {
		short, long := members()
		if long != 1 {
			t.Fatalf("the member of the group on the broker's 45 s session timeout is gone (%d members)", long)
		}
		if short == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the member of the group with a 2 s session timeout was never expired")
		}
	}
}
