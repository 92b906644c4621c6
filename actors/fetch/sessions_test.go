package fetch

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// fetchReq builds a Fetch request of version v for session (id, epoch)
// asking topic "t" partitions parts at offset 100+partition.
func fetchReq(v int16, id, epoch int32, parts ...int32) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.SessionID, r.SessionEpoch = v, id, epoch
	if len(parts) > 0 {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "t"
		rt.TopicID = [16]byte{1}
		for _, p := range parts {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, 100+int64(p), 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
		r.Topics = append(r.Topics, rt)
	}
	return r
}

func forget(r *kmsg.FetchRequest, parts ...int32) {
	ft := kmsg.NewFetchRequestForgottenTopic()
	ft.Topic, ft.TopicID, ft.Partitions = "t", [16]byte{1}, parts
	r.ForgottenTopics = append(r.ForgottenTopics, ft)
}

func partsOf(fc fetchContext) []int32 {
	var ps []int32
	for _, t := range fc.targets {
		ps = append(ps, t.key.partition)
	}
	return ps
}

func equalParts(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// okOutcomes is a response where every target is unchanged at hw with no
// records, except those listed in data, which returned bytes.
func okOutcomes(fc fetchContext, hw int64, data ...int32) []fetchOutcome {
	outs := make([]fetchOutcome, len(fc.targets))
	for i, t := range fc.targets {
		outs[i] = fetchOutcome{hw: hw, lso: hw, logStart: 0}
		for _, p := range data {
			if p == t.key.partition {
				outs[i].bytes = 10
			}
		}
	}
	return outs
}

func included(fc fetchContext, include []bool) []int32 {
	var ps []int32
	for i, in := range include {
		if in {
			ps = append(ps, fc.targets[i].key.partition)
		}
	}
	return ps
}

func TestFetchSessionsLifecycle(t *testing.T) {
	c := newFetchSessions(10, 7)

	// A full fetch with epoch 0 opens a session and answers everything.
	fc, code := c.begin(fetchReq(12, 0, 0, 0, 1, 2), 1000)
	if code != 0 || fc.sessionID == 0 || fc.incremental || !equalParts(partsOf(fc), []int32{0, 1, 2}) {
		t.Fatalf("initial: code %v, %+v", code, fc)
	}
	id := fc.sessionID
	inc := make([]bool, 3)
	c.finish(&fc, okOutcomes(fc, 5), inc)
	if !equalParts(included(fc, inc), []int32{0, 1, 2}) {
		t.Fatalf("a full response carries every partition, got %v", included(fc, inc))
	}

	// Epoch 1, nothing changed: the session's partitions are read, none is
	// answered.
	fc, code = c.begin(fetchReq(12, id, 1), 1001)
	if code != 0 || !fc.incremental || fc.sessionID != id || !equalParts(partsOf(fc), []int32{0, 1, 2}) {
		t.Fatalf("incremental: code %v, %+v", code, fc)
	}
	if fc.targets[1].fetchOffset != 101 {
		t.Fatalf("session forgot the fetch offset: %+v", fc.targets[1])
	}
	inc = make([]bool, 3)
	c.finish(&fc, okOutcomes(fc, 5), inc)
	if got := included(fc, inc); len(got) != 0 {
		t.Fatalf("nothing changed but %v answered", got)
	}

	// Epoch 2: partition 1 moves its offset and gets data, partition 2's
	// high watermark moves: both answered, 0 not.
	r := fetchReq(12, id, 2, 1)
	r.Topics[0].Partitions[0].FetchOffset = 150
	fc, code = c.begin(r, 1002)
	if code != 0 || fc.targets[1].fetchOffset != 150 {
		t.Fatalf("update: code %v, %+v", code, fc.targets)
	}
	outs := okOutcomes(fc, 5, 1)
	outs[2].hw, outs[2].lso = 6, 6
	inc = make([]bool, 3)
	c.finish(&fc, outs, inc)
	if got := included(fc, inc); !equalParts(got, []int32{1, 2}) {
		t.Fatalf("answered %v, want [1 2]", got)
	}

	// Partition 1 returned records: it moved to the end of the order.
	// Forget partition 0, add partition 3.
	r = fetchReq(12, id, 3, 3)
	forget(r, 0)
	fc, code = c.begin(r, 1003)
	if code != 0 || !equalParts(partsOf(fc), []int32{2, 1, 3}) {
		t.Fatalf("after forget/add: code %v, order %v, want [2 1 3]", code, partsOf(fc))
	}
	inc = make([]bool, 3)
	outs = okOutcomes(fc, 5)
	outs[1].hw, outs[1].lso = 6, 6 // partition 1 was last told 5
	outs[0].hw, outs[0].lso = 6, 6 // partition 2 was last told 6: unchanged
	c.finish(&fc, outs, inc)
	if got := included(fc, inc); !equalParts(got, []int32{1, 3}) {
		t.Fatalf("answered %v, want [1 3] (1's watermark moved, 3 is new)", got)
	}

	// Errors are always answered.
	fc, _ = c.begin(fetchReq(12, id, 4), 1004)
	outs = okOutcomes(fc, 5)
	for i := range outs {
		outs[i].hw, outs[i].lso = 6, 6
	}
	outs[2] = fetchOutcome{code: kerr.OffsetOutOfRange, hw: -1, lso: -1, logStart: -1}
	inc = make([]bool, 3)
	c.finish(&fc, outs, inc)
	if got := included(fc, inc); !equalParts(got, []int32{3}) {
		t.Fatalf("answered %v, want the failing partition 3", got)
	}

	// A wrong epoch and an unknown id are refused; neither closes the session.
	if _, code := c.begin(fetchReq(12, id, 9), 1005); code != kerr.InvalidFetchSessionEpoch {
		t.Fatalf("wrong epoch: %v", code)
	}
	if _, code := c.begin(fetchReq(12, id+1, 1), 1005); code != kerr.FetchSessionIDNotFound {
		t.Fatalf("unknown id: %v", code)
	}
	if _, code := c.begin(fetchReq(12, 0, 3), 1005); code != kerr.FetchSessionIDNotFound {
		t.Fatalf("id 0 with an epoch: %v", code)
	}
	if _, code := c.begin(fetchReq(13, id, 5), 1005); code != kerr.FetchSessionTopicIDError {
		t.Fatalf("v13 on a session of names: %v", code)
	}
	if _, code := c.begin(fetchReq(12, id, 5), 1006); code != 0 {
		t.Fatalf("the session should still be there at epoch 5: %v", code)
	}

	// Epoch -1 closes the session and fetches without one.
	fc, code = c.begin(fetchReq(12, id, -1, 0), 1007)
	if code != 0 || fc.sessionID != 0 || fc.incremental || c.Len() != 0 {
		t.Fatalf("close: code %v, %+v, %d sessions", code, fc, c.Len())
	}
	if fc.ended == nil || fc.ended.id != id || fc.ended.served != 5 {
		t.Fatalf("closing reports %+v, want session %d after 5 incremental fetches", fc.ended, id)
	}
	if _, code := c.begin(fetchReq(12, id, 6), 1008); code != kerr.FetchSessionIDNotFound {
		t.Fatalf("closed session still answers: %v", code)
	}
}

func TestFetchSessionsReopenAndOldVersions(t *testing.T) {
	c := newFetchSessions(10, 7)
	fc, _ := c.begin(fetchReq(11, 0, 0, 0), 0)
	first := fc.sessionID
	// (id, 0) replaces the session with a new one.
	fc, _ = c.begin(fetchReq(11, first, 0, 0, 1), 0)
	if fc.sessionID == 0 || fc.sessionID == first || c.Len() != 1 {
		t.Fatalf("reopen: id %d (old %d), %d sessions", fc.sessionID, first, c.Len())
	}
	// Before v7 there are no sessions.
	fc, code := c.begin(fetchReq(6, 0, 0, 0), 0)
	if code != 0 || fc.sessionID != 0 || c.Len() != 1 {
		t.Fatalf("v6: %v %+v, %d sessions", code, fc, c.Len())
	}
	// Leader epochs are only read from v9.
	fc, _ = c.begin(fetchReq(8, 0, -1, 0), 0)
	if fc.targets[0].currentLeaderEpoch != -1 {
		t.Fatalf("v8 leader epoch %d, want -1", fc.targets[0].currentLeaderEpoch)
	}
	// v13 keys partitions by topic id.
	fc, _ = c.begin(fetchReq(13, 0, 0, 0), 0)
	if k := fc.targets[0].key; k.id != [16]byte{1} || k.topic != "" || !fc.usesIDs {
		t.Fatalf("v13 key %+v", k)
	}
}

func TestFetchSessionsEviction(t *testing.T) {
	c := newFetchSessions(2, 7)
	a, _ := c.begin(fetchReq(12, 0, 0, 0, 1), 0)
	b, _ := c.begin(fetchReq(12, 0, 0, 0, 1, 2), 10)
	if a.sessionID == 0 || b.sessionID == 0 {
		t.Fatal("sessions not created")
	}
	// Full, nobody idle long enough, the newcomer is no bigger than the
	// smallest: no session for it.
	cfc, _ := c.begin(fetchReq(12, 0, 0, 5), 20)
	if cfc.sessionID != 0 {
		t.Fatalf("a 1-partition session evicted a 2-partition one")
	}
	// A bigger newcomer evicts the smallest (a).
	d, _ := c.begin(fetchReq(12, 0, 0, 0, 1, 2, 3), 30)
	if d.sessionID == 0 {
		t.Fatal("a 4-partition session did not evict a 2-partition one")
	}
	if _, code := c.begin(fetchReq(12, a.sessionID, 1), 31); code != kerr.FetchSessionIDNotFound {
		t.Fatalf("evicted session still answers: %v", code)
	}
	// After the idle time, the least recently used goes even for a small one.
	if _, code := c.begin(fetchReq(12, d.sessionID, 1), 40); code != 0 {
		t.Fatal(code)
	}
	e, _ := c.begin(fetchReq(12, 0, 0, 9), 10+fetchSessionEvictMillis)
	if e.sessionID == 0 {
		t.Fatal("an idle session was not evicted")
	}
	if _, code := c.begin(fetchReq(12, b.sessionID, 1), 50+fetchSessionEvictMillis); code != kerr.FetchSessionIDNotFound {
		t.Fatalf("the idle session b should have gone: %v", code)
	}
	if _, code := c.begin(fetchReq(12, d.sessionID, 2), 50+fetchSessionEvictMillis); code != 0 {
		t.Fatalf("the recently used session d should have stayed: %v", code)
	}

	// A cache of 0 slots never opens sessions: every fetch is full.
	z := newFetchSessions(0, 1)
	if fc, _ := z.begin(fetchReq(12, 0, 0, 0), 0); fc.sessionID != 0 {
		t.Fatal("session opened with 0 slots")
	}
}

func TestNextEpochWraps(t *testing.T) {
	if nextEpoch(1<<31-1) != 1 || nextEpoch(4) != 5 {
		t.Fatal("epoch arithmetic")
	}
}
