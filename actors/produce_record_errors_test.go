package actors

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// KIP-467 through the broker: a batch of 100 records, 10 of them keyless,
// to a compacted topic is answered INVALID_RECORD with record_errors
// naming exactly the 10 (Produce v8+) and an error message; before v8 the
// response has no place for them.
func TestProduceRecordErrors(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopicWith(t, b, "compacted", 1, "cleanup.policy", "compact")
	recs := make([]batchtest.Record, 100)
	var want []int32
	for i := range recs {
		recs[i] = batchtest.Record{Value: []byte("v"), Timestamp: 1}
		if i%10 == 4 {
			want = append(want, int32(i))
		} else {
			recs[i].Key = []byte("k")
		}
	}
	batch := batchtest.Build(recs)
	for _, v := range []int16{7, 8, 9, 11} {
		req := produceRequest9(-1, "compacted", 0, append([]byte(nil), batch...))
		req.Version = v
		p := call(t, b, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		var got []int32
		for _, e := range p.ErrorRecords {
			got = append(got, e.RelativeOffset)
			if e.ErrorMessage == nil || *e.ErrorMessage == "" {
				t.Errorf("v%d: record %d without a message", v, e.RelativeOffset)
			}
		}
		if p.ErrorCode != int16(kerr.InvalidRecord) || p.BaseOffset != -1 {
			t.Errorf("v%d: code %d base %d, want INVALID_RECORD", v, p.ErrorCode, p.BaseOffset)
		}
		wantHere := want
		if v < 8 {
			wantHere = nil
		}
		if !slices.Equal(got, wantHere) {
			t.Errorf("v%d: record errors %v, want %v", v, got, wantHere)
		}
		if v >= 8 && (p.ErrorMessage == nil || *p.ErrorMessage == "") {
			t.Errorf("v%d: no error message", v)
		}
	}
}
