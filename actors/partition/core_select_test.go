package partition

import "testing"

// TestPreferredReadReplica follows Kafka's RackAwareReplicaSelector: no
// rack or no replica in it, or the leader in it, keeps the consumer on
// the leader; otherwise the most caught-up in-sync follower in its rack
// that has the offset, never one outside the ISR or unknown to the view.
func TestPreferredReadReplica(t *testing.T) {
	c, log := leaderCore(t)
	racks := map[int32]string{1: "a", 2: "b", 3: "b"}
	rackOf := func(id int32) (string, bool) { r, ok := racks[id]; return r, ok }
	for range 4 {
		appendOne(t, c, log, 1, "x")
	}
	c.FollowerFetched(2, 10, -1, testNow, *log)
	c.FollowerFetched(3, 20, -1, testNow, *log)
	for _, tc := range []struct {
		name   string
		rack   string
		offset int64
		want   int32
	}{
		{"no rack", "", 0, -1},
		{"the leader's rack", "a", 0, -1},
		{"a rack with no replica", "z", 0, -1},
		{"the most caught up in rack b", "b", 0, 3},
		{"only 3 has offset 15", "b", 15, 3},
		{"nobody in rack b has offset 25", "b", 25, -1},
	} {
		if got := c.PreferredReadReplica(tc.rack, tc.offset, testNow, rackOf); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	// Equal positions: the one caught up most recently, then the lowest id.
	c.FollowerFetched(2, 20, -1, testNow, *log)
	if got := c.PreferredReadReplica("b", 0, testNow, rackOf); got != 2 {
		t.Errorf("tie: %d, want 2", got)
	}
	// Out of the ISR, or gone from the view: not a candidate.
	c.lead.ISR = []int32{1, 2}
	if got := c.PreferredReadReplica("b", 0, testNow, rackOf); got != 2 {
		t.Errorf("3 out of the ISR: %d, want 2", got)
	}
	delete(racks, 2)
	if got := c.PreferredReadReplica("b", 0, testNow, rackOf); got != -1 {
		t.Errorf("2 unknown, 3 out of the ISR: %d, want -1", got)
	}
	// A follower never redirects.
	c.Follow()
	racks[2] = "b"
	if got := c.PreferredReadReplica("b", 0, testNow, rackOf); got != -1 {
		t.Errorf("follower: %d", got)
	}
}
