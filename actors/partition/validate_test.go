package partition

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

func TestValidateProduceErrorCodes(t *testing.T) {
	rules := defaultRules(t)
	good := batchtest.Plain(3, testNow)
	mutate := func(f func(b []byte) []byte) []byte {
		b := append([]byte(nil), good...)
		return f(b)
	}
	small := rules
	small.MaxMessageBytes = int32(len(good) - 1)
	tinySegment := rules
	tinySegment.SegmentBytes = int64(len(good) - 1)
	zstd := batchtest.Plain(3, testNow, batchtest.Compression(wire.CodecZstd, wire.Compress))
	control := batchtest.Plain(1, testNow, batchtest.Attributes(wire.AttrControl|wire.AttrTransactional))
	txn := batchtest.Plain(1, testNow, batchtest.Producer(5, 0, 0), batchtest.Attributes(wire.AttrTransactional))
	noSeq := batchtest.Plain(1, testNow, batchtest.Producer(5, 0, -1))

	tests := []struct {
		name    string
		records []byte
		version int16
		rules   Rules
		want    kerr.Code
	}{
		{"valid", good, 9, rules, kerr.None},
		{"no batch", nil, 9, rules, kerr.InvalidRecord},
		{"two batches", append(append([]byte(nil), good...), good...), 9, rules, kerr.InvalidRecord},
		{"shorter than a header", good[:40], 9, rules, kerr.CorruptMessage},
		{"length field beyond the bytes", good[:len(good)-1], 9, rules, kerr.CorruptMessage},
		{"magic 1", mutate(func(b []byte) []byte { b[wire.BatchMagicPos] = 1; return b }), 9, rules, kerr.UnsupportedForMessageFormat},
		{"magic 0", mutate(func(b []byte) []byte { b[wire.BatchMagicPos] = 0; return b }), 3, rules, kerr.UnsupportedForMessageFormat},
		{"bad crc", mutate(func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b }), 9, rules, kerr.CorruptMessage},
		{"record count against lastOffsetDelta", mutate(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[wire.BatchRecordCountPos:], 7)
			batchtest.Reseal(b)
			return b
		}), 9, rules, kerr.InvalidRecord},
		{"unknown codec", mutate(func(b []byte) []byte { b[wire.BatchAttributesPos+1] |= 7; batchtest.Reseal(b); return b }), 9, rules, kerr.UnsupportedCompressionType},
		{"over max.message.bytes", good, 9, small, kerr.MessageTooLarge},
		{"over segment.bytes", good, 9, tinySegment, kerr.RecordListTooLarge},
		{"zstd before v7", zstd, 6, rules, kerr.UnsupportedCompressionType},
		{"zstd at v7", zstd, 7, rules, kerr.None},
		{"control batch", control, 9, rules, kerr.InvalidRecord},
		{"transactional batch", txn, 9, rules, kerr.InvalidRequest},
		{"idempotent without sequence", noSeq, 9, rules, kerr.InvalidRecord},
		{"idempotent", batchtest.Plain(2, testNow, batchtest.Producer(5, 0, 0)), 3, rules, kerr.None},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var scratch []byte
			v := validateProduce(tc.records, tc.version, tc.rules, testNow, true, &scratch)
			if v.code != tc.want {
				t.Fatalf("code %v (%s), want %v", v.code, v.msg, tc.want)
			}
			// Without the CRC pass every other verdict is the same.
			if noCRC := validateProduce(tc.records, tc.version, tc.rules, testNow, false, &scratch); noCRC.code != tc.want && tc.name != "bad crc" {
				t.Fatalf("without CRC: code %v (%s), want %v", noCRC.code, noCRC.msg, tc.want)
			}
			if v.code != kerr.None && v.msg == "" {
				t.Fatal("rejection without a message")
			}
			if v.code == kerr.None && v.header.Size() != int64(len(tc.records)) {
				t.Fatalf("header %+v does not describe the batch", v.header)
			}
		})
	}
}

func TestValidateProduceTimestamps(t *testing.T) {
	const hour = 3600_000
	def := defaultRules(t) // CreateTime, after.max.ms one hour, before unlimited
	if def.AfterMaxMs != hour || def.LogAppendTime {
		t.Fatalf("defaults: %+v", def)
	}
	before := RulesOf(topicConfig(t, "message.timestamp.before.max.ms", "60000"))
	logTime := RulesOf(topicConfig(t, "message.timestamp.type", "LogAppendTime"))
	if !logTime.LogAppendTime || before.BeforeMaxMs != 60000 {
		t.Fatalf("overrides not applied: %+v %+v", logTime, before)
	}
	future := batchtest.Plain(2, testNow+2*hour)
	old := batchtest.Plain(2, testNow-10*24*hour)
	// The first record is old, the batch's max timestamp recent: only a
	// per-record check sees it.
	mixed := []batchtest.Record{{Value: []byte("v"), Timestamp: testNow - 5*60_000}, {Value: []byte("v"), Timestamp: testNow}}

	check := func(name string, records []byte, r Rules, want kerr.Code) {
		t.Helper()
		var scratch []byte
		if v := validateProduce(records, 9, r, testNow, true, &scratch); v.code != want {
			t.Errorf("%s: code %v (%s), want %v", name, v.code, v.msg, want)
		}
	}
	check("two hours ahead, CreateTime", future, def, kerr.InvalidTimestamp)
	check("two hours ahead, LogAppendTime", future, logTime, kerr.None)
	check("ten days old, before unlimited", old, def, kerr.None)
	check("ten days old, before one minute", old, before, kerr.InvalidTimestamp)
	check("no timestamp (-1)", batchtest.Plain(1, -1), before, kerr.None)
	for _, codec := range []int{wire.CodecNone, wire.CodecGzip, wire.CodecSnappy, wire.CodecLZ4, wire.CodecZstd} {
		s := batchtest.Build(mixed, batchtest.Compression(codec, wire.Compress))
		check("first record old, codec "+string(rune('0'+codec)), s, before, kerr.InvalidTimestamp)
		check("first record old, unlimited, codec "+string(rune('0'+codec)), s, def, kerr.None)
		fresh := batchtest.Plain(4, testNow-1000, batchtest.Compression(codec, wire.Compress))
		check("fresh, codec "+string(rune('0'+codec)), fresh, before, kerr.None)
	}
	// Records are read to check them: a corrupt compressed section is
	// found then (and only then).
	b := batchtest.Plain(3, testNow, batchtest.Compression(wire.CodecGzip, wire.Compress))
	b[len(b)-3] ^= 0xff
	batchtest.Reseal(b)
	check("corrupt gzip, no per-record check", b, def, kerr.None)
	check("corrupt gzip, per-record check", b, before, kerr.CorruptMessage)
}

func TestValidateProduceCompactedNeedsKeys(t *testing.T) {
	compact := RulesOf(topicConfig(t, "cleanup.policy", "compact"))
	if !compact.Compact || defaultRules(t).Compact {
		t.Fatal("cleanup.policy not mapped")
	}
	for _, codec := range []int{wire.CodecNone, wire.CodecSnappy, wire.CodecZstd} {
		keyless := batchtest.Plain(3, testNow, batchtest.Compression(codec, wire.Compress))
		var scratch []byte
		if v := validateProduce(keyless, 9, compact, testNow, true, &scratch); v.code != kerr.InvalidRecord {
			t.Errorf("codec %d: keyless records on a compacted topic: %v (%s), want INVALID_RECORD", codec, v.code, v.msg)
		}
		if v := validateProduce(keyless, 9, defaultRules(t), testNow, true, &scratch); v.code != kerr.None {
			t.Errorf("codec %d: keyless records on a delete topic: %v", codec, v.code)
		}
		keyed := batchtest.Build(batchtest.Repeat(3, batchtest.Record{Key: []byte("k"), Value: []byte("value"), Timestamp: testNow}),
			batchtest.Compression(codec, wire.Compress))
		if v := validateProduce(keyed, 9, compact, testNow, true, &scratch); v.code != kerr.None {
			t.Errorf("codec %d: keyed records on a compacted topic: %v (%s)", codec, v.code, v.msg)
		}
	}
}

// BenchmarkValidateProduce measures the per-batch validation cost of a
// 16 KiB uncompressed batch of 100-byte records with default configs (no
// per-record work).
func BenchmarkValidateProduce(b *testing.B) {
	batch := batchtest.Build(batchtest.Repeat(150, batchtest.Record{Value: make([]byte, 100), Timestamp: testNow}))
	r := RulesOf(topicConfig(b))
	var scratch []byte
	for _, crc := range []bool{true, false} {
		name := "crc"
		if !crc {
			name = "header-only"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(batch)))
			for b.Loop() {
				if v := validateProduce(batch, 9, r, testNow, crc, &scratch); v.code != kerr.None {
					b.Fatal(v.msg)
				}
			}
		})
	}
}

// KIP-467: every record a per-record rule refuses is named by its index
// (Produce v8+ record_errors), not only the first, and the partition's
// error message summarizes them.
func TestValidateProduceRecordErrors(t *testing.T) {
	const hour = 3600_000
	compact := RulesOf(topicConfig(t, "cleanup.policy", "compact"))
	before := RulesOf(topicConfig(t, "message.timestamp.before.max.ms", "60000"))
	both := RulesOf(topicConfig(t, "cleanup.policy", "compact", "message.timestamp.before.max.ms", "60000"))
	logTime := RulesOf(topicConfig(t, "message.timestamp.type", "LogAppendTime"))

	keyed := func(n int, keyless ...int) []batchtest.Record {
		recs := make([]batchtest.Record, n)
		for i := range recs {
			recs[i] = batchtest.Record{Key: []byte("k"), Value: []byte("value"), Timestamp: testNow}
		}
		for _, i := range keyless {
			recs[i].Key = nil
		}
		return recs
	}
	every10th := []int{3, 13, 23, 33, 43, 53, 63, 73, 83, 93}
	// Records 1 and 4 too old, 2 and 5 too new (the header's max
	// timestamp alone says only that some record is).
	stamps := keyed(7)
	for i, ts := range []int64{testNow, testNow - 2*60_000, testNow + 2*hour, testNow, testNow - 5*60_000, testNow + 3*hour, testNow - 1000} {
		stamps[i].Timestamp = ts
	}
	mixed := slices.Clone(stamps)
	mixed[1].Key, mixed[3].Key = nil, nil // 1 old and keyless: listed once, for its key
	marked := func(ts int64) []byte { return batchtest.Plain(3, ts, batchtest.Attributes(wire.AttrTimestampLogTime)) }

	tests := []struct {
		name    string
		records func(codec int) []byte
		rules   Rules
		want    kerr.Code
		indexes []int32
	}{
		{"10 keyless of 100 on a compacted topic", func(c int) []byte { return buildWith(keyed(100, every10th...), c) },
			compact, kerr.InvalidRecord, []int32{3, 13, 23, 33, 43, 53, 63, 73, 83, 93}},
		{"all keyless", func(c int) []byte {
			return buildWith(batchtest.Repeat(4, batchtest.Record{Value: []byte("value"), Timestamp: testNow}), c)
		},
			compact, kerr.InvalidRecord, []int32{0, 1, 2, 3}},
		{"timestamps too old and too new", func(c int) []byte { return buildWith(stamps, c) },
			before, kerr.InvalidTimestamp, []int32{1, 2, 4, 5}},
		{"only too new, before unlimited", func(c int) []byte { return buildWith(stamps, c) },
			defaultRules(t), kerr.InvalidTimestamp, []int32{2, 5}},
		{"keys and timestamps", func(c int) []byte { return buildWith(mixed, c) },
			both, kerr.InvalidTimestamp, []int32{1, 2, 3, 4, 5}},
		{"keyless only, timestamps fine on a compacted topic", func(c int) []byte { return buildWith(mixed, c) },
			RulesOf(topicConfig(t, "cleanup.policy", "compact", "message.timestamp.after.max.ms", "86400000")), kerr.InvalidRecord, []int32{1, 3}},
		{"marked LogAppendTime on a LogAppendTime topic", func(int) []byte { return marked(testNow) },
			logTime, kerr.InvalidTimestamp, []int32{0, 1, 2}},
		{"marked LogAppendTime without a timestamp", func(int) []byte { return marked(-1) },
			defaultRules(t), kerr.InvalidTimestamp, []int32{0, 1, 2}},
		{"marked LogAppendTime, max timestamp in range", func(int) []byte { return marked(testNow) },
			defaultRules(t), kerr.None, nil},
		{"marked LogAppendTime, max timestamp too new", func(int) []byte { return marked(testNow + 2*hour) },
			defaultRules(t), kerr.InvalidTimestamp, []int32{0, 1, 2}},
	}
	for _, tc := range tests {
		for _, codec := range []int{wire.CodecNone, wire.CodecLZ4} {
			var scratch []byte
			v := validateProduce(tc.records(codec), 9, tc.rules, testNow, true, &scratch)
			name := tc.name + ", codec " + string(rune('0'+codec))
			if v.code != tc.want {
				t.Errorf("%s: code %v (%s), want %v", name, v.code, v.msg, tc.want)
				continue
			}
			var got []int32
			for _, e := range v.records {
				got = append(got, e.Index)
				if e.Msg == "" {
					t.Errorf("%s: record %d listed without a message", name, e.Index)
				}
			}
			if !slices.Equal(got, tc.indexes) {
				t.Errorf("%s: record errors %v, want %v", name, got, tc.indexes)
			}
			if tc.want != kerr.None && !strings.Contains(v.msg, fmt.Sprintf("%d of the batch's", len(tc.indexes))) {
				t.Errorf("%s: message %q does not count the bad records", name, v.msg)
			}
		}
	}
}

// A batch with more bad records than maxRecordErrors (possible when a
// compressed batch of tiny records expands) lists the first ones, with
// messages for the first recordErrorMessages, and counts them all.
func TestValidateProduceRecordErrorsBounded(t *testing.T) {
	n := maxRecordErrors + 10
	batch := buildWith(batchtest.Repeat(n, batchtest.Record{Timestamp: testNow}), wire.CodecLZ4)
	var scratch []byte
	v := validateProduce(batch, 9, RulesOf(topicConfig(t, "cleanup.policy", "compact")), testNow, true, &scratch)
	if v.code != kerr.InvalidRecord || len(v.records) != maxRecordErrors {
		t.Fatalf("code %v with %d record errors, want INVALID_RECORD with %d", v.code, len(v.records), maxRecordErrors)
	}
	for i, e := range v.records {
		if e.Index != int32(i) || (e.Msg != "") != (i < recordErrorMessages) {
			t.Fatalf("record error %d: %+v", i, e)
		}
	}
	if !strings.Contains(v.msg, fmt.Sprintf("%d of the batch's %d", n, n)) || !strings.Contains(v.msg, fmt.Sprintf("lists the first %d", maxRecordErrors)) {
		t.Errorf("message %q", v.msg)
	}
}

// buildWith builds recs as one batch compressed with codec.
func buildWith(recs []batchtest.Record, codec int) []byte {
	if codec == wire.CodecNone {
		return batchtest.Build(recs)
	}
	return batchtest.Build(recs, batchtest.Compression(codec, wire.Compress))
}
