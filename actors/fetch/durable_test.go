package fetch

import (
	"testing"

	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// A samsa follower's durable end (wire.FetchDurableEndTag) reaches the
// fetch target of its partition, a Kafka follower's fetch has none, and
// the answer carries wire.FetchDurableHonouredTag exactly for the
// partitions whose leader counted it and answered without error.
func TestFollowerDurableEndInAndOut(t *testing.T) {
	req := fetchReq(17, 0, -1, 0, 1, 2)
	wire.SetFetchDurableEnd(&req.Topics[0].Partitions[0].UnknownTags, 42)
	wire.SetFetchDurableEnd(&req.Topics[0].Partitions[1].UnknownTags, 7)
	fc, code := newFetchSessions(10, 7).begin(req, 1000)
	if code != 0 || len(fc.targets) != 3 {
		t.Fatalf("begin: %v, %d targets", code, len(fc.targets))
	}
	for i, want := range []struct {
		durable bool
		end     int64
	}{{true, 42}, {true, 7}, {false, 0}} {
		if got := fc.targets[i]; got.durable != want.durable || want.durable && got.durableEnd != want.end {
			t.Fatalf("partition %d: durable %v end %d, want %v %d", i, got.durable, got.durableEnd, want.durable, want.end)
		}
	}

	o := &fetchOp{}
	for i, honoured := range []bool{true, true, false} {
		s := partition.FetchSlot{DurableHonoured: honoured}
		code := kerr.None
		if i == 1 {
			code = kerr.NotLeaderOrFollower
		}
		o.slots = append(o.slots, s)
		o.outs = append(o.outs, fetchOutcome{code: code, hw: 5, lso: 5, logStart: 0})
		o.include = append(o.include, true)
	}
	k := answerAsRead(t, req, &fc, o)
	for i, want := range []bool{true, false, false} {
		if got := wire.FetchDurableHonoured(&k.Topics[0].Partitions[i].UnknownTags); got != want {
			t.Fatalf("partition %d answered honoured %v, want %v", i, got, want)
		}
	}
}
