package partition

import (
	"slices"
	"testing"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// A batch refused for some of its records is answered, not appended, and
// its Ack names those records for the shell's record_errors.
func TestCoreProduceCarriesRecordErrors(t *testing.T) {
	rules := RulesOf(topicConfig(t, "cleanup.policy", "compact"))
	log := LogState{Policy: segment.FlushInterval, SegmentBytes: 1 << 30}
	c, _ := NewCore(rules, nil, -1, 0, testNow, log)

	recs := make([]batchtest.Record, 100)
	var want []int32
	for i := range recs {
		recs[i] = batchtest.Record{Value: []byte("value"), Timestamp: testNow}
		if i%10 == 7 {
			want = append(want, int32(i))
			continue
		}
		recs[i].Key = []byte{byte(i)}
	}
	a, fx := c.Produce(Produce{Records: batchtest.Build(recs), Version: 9, Acks: -1, Ticket: "t"}, testNow, log)
	if a != nil {
		t.Fatal("a batch with keyless records on a compacted topic was to be appended")
	}
	if len(fx.Acks) != 1 {
		t.Fatalf("%d acks, want 1", len(fx.Acks))
	}
	ack := fx.Acks[0]
	var got []int32
	for _, e := range ack.RecordErrors {
		got = append(got, e.Index)
	}
	if ack.Ticket != "t" || ack.Code != kerr.InvalidRecord || ack.BaseOffset != -1 || ack.Msg == "" || !slices.Equal(got, want) {
		t.Fatalf("ack %+v (record errors %v), want INVALID_RECORD naming %v", ack, got, want)
	}

	// The keyed records alone are appended.
	recs = slices.DeleteFunc(recs, func(r batchtest.Record) bool { return r.Key == nil })
	a, fx = c.Produce(Produce{Records: batchtest.Build(recs), Version: 9, Acks: -1, Ticket: "u"}, testNow, log)
	if a == nil || len(fx.Acks) != 0 {
		t.Fatalf("the keyed records were refused: %+v", fx.Acks)
	}
	// Errors that are not a record's carry no record errors.
	a, fx = c.Produce(Produce{Records: nil, Version: 9, Acks: -1, Ticket: "v"}, testNow, log)
	if a != nil || len(fx.Acks) != 1 || fx.Acks[0].RecordErrors != nil {
		t.Fatalf("empty produce: %+v", fx.Acks)
	}
}
