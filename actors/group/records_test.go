package group

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func strp(s string) *string { return &s }

// The exact bytes pin the on-disk format: a change here breaks Kafka's
// tools and every existing __consumer_offsets partition.
func TestOffsetKeyAndValueBytes(t *testing.T) {
	key := OffsetKeyBytes("g", "t", 7)
	wantKey := []byte{0, 1, 0, 1, 'g', 0, 1, 't', 0, 0, 0, 7}
	if !bytes.Equal(key, wantKey) {
		t.Fatalf("offset key = % x, want % x", key, wantKey)
	}
	val := OffsetValueBytes(OffsetValue{Offset: 42, LeaderEpoch: 5, Metadata: "m", CommitTimestamp: 1000, ExpireTimestamp: -1})
	wantVal := []byte{
		0, 3, // version 3
		0, 0, 0, 0, 0, 0, 0, 42, // offset
		0, 0, 0, 5, // leader epoch
		0, 1, 'm', // metadata
		0, 0, 0, 0, 0, 0, 3, 0xe8, // commit timestamp 1000
	}
	if !bytes.Equal(val, wantVal) {
		t.Fatalf("offset value = % x, want % x", val, wantVal)
	}
	expiring := OffsetValueBytes(OffsetValue{Offset: 1, Metadata: "", CommitTimestamp: 1, ExpireTimestamp: 9})
	if expiring[1] != 1 || len(expiring) != 2+8+2+8+8 {
		t.Fatalf("expiring commit should be written as value v1, got % x", expiring)
	}
	gk := GroupKeyBytes("grp")
	if !bytes.Equal(gk, []byte{0, 2, 0, 3, 'g', 'r', 'p'}) {
		t.Fatalf("group key = % x", gk)
	}
}

func TestDecodeKey(t *testing.T) {
	k, err := DecodeKey(OffsetKeyBytes("group", "topic", 3))
	if err != nil || k.Kind != KeyOffset || k.Group != "group" || k.Topic != "topic" || k.Partition != 3 {
		t.Fatalf("offset key: %+v %v", k, err)
	}
	// Key version 0 has the same layout.
	v0 := OffsetKeyBytes("group", "topic", 3)
	v0[1] = 0
	if k, err := DecodeKey(v0); err != nil || k.Kind != KeyOffset || k.Version != 0 {
		t.Fatalf("offset key v0: %+v %v", k, err)
	}
	k, err = DecodeKey(GroupKeyBytes("group"))
	if err != nil || k.Kind != KeyGroup || k.Group != "group" {
		t.Fatalf("group key: %+v %v", k, err)
	}
	k, err = DecodeKey([]byte{0, 3, 0, 1, 'x'})
	if err != nil || k.Kind != KeyConsumer || k.Group != "x" {
		t.Fatalf("KIP-848 key should be KeyConsumer of group x: %+v %v", k, err)
	}
	k, err = DecodeKey([]byte{0, 9, 0, 1, 'x'})
	if err != nil || k.Kind != KeyOther {
		t.Fatalf("share group key should be KeyOther: %+v %v", k, err)
	}
	if _, err := DecodeKey([]byte{0xff, 0xff}); !errors.Is(err, ErrKeyVersion) {
		t.Fatalf("negative version: %v", err)
	}
	for _, b := range [][]byte{nil, {0}, {0, 1, 0, 5, 'a'}, {0, 2, 0xff, 0xfe}} {
		if _, err := DecodeKey(b); !errors.Is(err, ErrTruncated) {
			t.Fatalf("DecodeKey(% x) = %v, want ErrTruncated", b, err)
		}
	}
}

func sampleGroupValue() GroupValue {
	return GroupValue{
		ProtocolType:          "consumer",
		Generation:            7,
		Protocol:              strp("range"),
		Leader:                strp("c-1"),
		CurrentStateTimestamp: 12345,
		Members: []MemberValue{
			{MemberID: "c-1", InstanceID: strp("i-1"), ClientID: "c", ClientHost: "/127.0.0.1", RebalanceTimeoutMs: 60000, SessionTimeoutMs: 45000, Subscription: []byte{1, 2}, Assignment: []byte{3}},
			{MemberID: "c-2", ClientID: "c", ClientHost: "/127.0.0.2", RebalanceTimeoutMs: 30000, SessionTimeoutMs: 10000, Subscription: []byte{}, Assignment: []byte{}},
		},
	}
}

// atVersion drops what an older version cannot carry, so a round trip
// through that version compares equal.
func groupAtVersion(v GroupValue, version int16) GroupValue {
	out := v
	out.Members = nil
	if version < 2 {
		out.CurrentStateTimestamp = -1
	}
	for _, m := range v.Members {
		if version < 3 {
			m.InstanceID = nil
		}
		if version < 1 {
			m.RebalanceTimeoutMs = m.SessionTimeoutMs
		}
		out.Members = append(out.Members, m)
	}
	return out
}

func TestGroupValueRoundTripAllVersions(t *testing.T) {
	in := sampleGroupValue()
	for version := int16(0); version <= 4; version++ {
		b := appendGroupValue(nil, in, version)
		got, err := DecodeGroupValue(b)
		if err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		if want := groupAtVersion(in, version); !reflect.DeepEqual(got, want) {
			t.Fatalf("v%d round trip:\n got %+v\nwant %+v", version, got, want)
		}
	}
	empty := GroupValue{ProtocolType: "consumer", Generation: 3, CurrentStateTimestamp: 1}
	got, err := DecodeGroupValue(GroupValueBytes(empty))
	if err != nil || got.Protocol != nil || got.Leader != nil || len(got.Members) != 0 || got.Generation != 3 {
		t.Fatalf("empty group round trip: %+v %v", got, err)
	}
}

func TestOffsetValueRoundTripAllVersions(t *testing.T) {
	in := OffsetValue{Offset: 99, LeaderEpoch: 4, Metadata: "meta", CommitTimestamp: 777, ExpireTimestamp: 888}
	for version := int16(0); version <= 4; version++ {
		got, err := DecodeOffsetValue(appendOffsetValue(nil, in, version))
		if err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		want := in
		if version < 3 {
			want.LeaderEpoch = -1
		}
		if version != 1 {
			want.ExpireTimestamp = -1
		}
		if got != want {
			t.Fatalf("v%d: got %+v want %+v", version, got, want)
		}
	}
}

// Kafka's own schemas, as franz-go's kmsg transcribes them, must read what
// we write and we must read what they write, at every version.
func TestRecordsInteroperateWithKmsg(t *testing.T) {
	in := sampleGroupValue()
	var kv kmsg.GroupMetadataValue
	if err := kv.ReadFrom(GroupValueBytes(in)); err != nil {
		t.Fatalf("kmsg reads our group value: %v", err)
	}
	if kv.Version != 3 || kv.Generation != 7 || *kv.Leader != "c-1" || len(kv.Members) != 2 ||
		*kv.Members[0].InstanceID != "i-1" || kv.Members[1].SessionTimeoutMillis != 10000 ||
		!bytes.Equal(kv.Members[0].Subscription, []byte{1, 2}) || kv.CurrentStateTimestamp != 12345 {
		t.Fatalf("kmsg decoded %+v", kv)
	}
	for version := int16(0); version <= 4; version++ {
		kv.Version = version
		got, err := DecodeGroupValue(kv.AppendTo(nil))
		if err != nil {
			t.Fatalf("kmsg group value v%d: %v", version, err)
		}
		if want := groupAtVersion(in, version); !reflect.DeepEqual(got, want) {
			t.Fatalf("kmsg group value v%d:\n got %+v\nwant %+v", version, got, want)
		}
	}

	var ko kmsg.OffsetCommitValue
	if err := ko.ReadFrom(OffsetValueBytes(OffsetValue{Offset: 5, LeaderEpoch: 2, Metadata: "x", CommitTimestamp: 6, ExpireTimestamp: -1})); err != nil {
		t.Fatal(err)
	}
	if ko.Version != 3 || ko.Offset != 5 || ko.LeaderEpoch != 2 || ko.Metadata != "x" || ko.CommitTimestamp != 6 {
		t.Fatalf("kmsg decoded %+v", ko)
	}
	ko.TopicID = [16]byte{1, 2, 3} // a tagged field in v4 that we must skip
	for version := int16(0); version <= 4; version++ {
		ko.Version = version
		got, err := DecodeOffsetValue(ko.AppendTo(nil))
		if err != nil || got.Offset != 5 || got.Metadata != "x" || got.CommitTimestamp != 6 {
			t.Fatalf("kmsg offset value v%d: %+v %v", version, got, err)
		}
	}

	var kk kmsg.OffsetCommitKey
	if err := kk.ReadFrom(OffsetKeyBytes("g", "topic", 9)); err != nil || kk.Version != 1 || kk.Group != "g" || kk.Topic != "topic" || kk.Partition != 9 {
		t.Fatalf("kmsg offset key: %+v %v", kk, err)
	}
	var gk kmsg.GroupMetadataKey
	if err := gk.ReadFrom(GroupKeyBytes("g")); err != nil || gk.Version != 2 || gk.Group != "g" {
		t.Fatalf("kmsg group key: %+v %v", gk, err)
	}
}

// A version newer than we know is read as the newest we know, skipping
// its tagged fields (KIP-915).
func TestDecodeFutureValueVersion(t *testing.T) {
	b := appendOffsetValue(nil, OffsetValue{Offset: 3, LeaderEpoch: 1, Metadata: "m", CommitTimestamp: 4}, 4)
	b[1] = 9
	b = b[:len(b)-1]
	b = append(b, 1, 5, 2, 0xaa, 0xbb) // one unknown tag (5) of two bytes
	got, err := DecodeOffsetValue(b)
	if err != nil || got.Offset != 3 || got.Metadata != "m" {
		t.Fatalf("future version: %+v %v", got, err)
	}
}

func TestDecodeValueErrors(t *testing.T) {
	good := GroupValueBytes(sampleGroupValue())
	for i := range len(good) - 1 {
		if _, err := DecodeGroupValue(good[:i]); err == nil {
			t.Fatalf("truncated group value (%d of %d bytes) decoded", i, len(good))
		}
	}
	goodOffset := OffsetValueBytes(OffsetValue{Offset: 1, Metadata: "abc", ExpireTimestamp: -1})
	for i := range len(goodOffset) - 1 {
		if _, err := DecodeOffsetValue(goodOffset[:i]); err == nil {
			t.Fatalf("truncated offset value (%d bytes) decoded", i)
		}
	}
	if _, err := DecodeOffsetValue([]byte{0x80, 0}); !errors.Is(err, ErrValueVersion) {
		t.Fatalf("negative offset value version: %v", err)
	}
	if _, err := DecodeGroupValue([]byte{0x80, 0}); !errors.Is(err, ErrValueVersion) {
		t.Fatalf("negative group value version: %v", err)
	}
}
