package group

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// Record is one __consumer_offsets record as the coordinator writes it:
// Key and Value are the record's key and value bytes. A nil Value is a
// tombstone (the offset or the group was deleted); compaction keeps only
// the newest record per key, so a tombstone eventually erases the key.
type Record struct {
	Key   []byte
	Value []byte
}

// Schema versions written by this package; they match what Kafka 2.3+
// writes, so Kafka's own tools (kafka-console-consumer with the
// OffsetsMessageFormatter / GroupMetadataMessageFormatter) read them.
const (
	offsetKeyVersion           = 1 // OffsetCommitKey
	groupKeyVersion            = 2 // GroupMetadataKey
	offsetValueVersion         = 3 // OffsetCommitValue without expiry
	offsetValueVersionExpiring = 1 // OffsetCommitValue with an explicit expire timestamp
	groupValueVersion          = 3 // GroupMetadataValue
	maxKnownValueVersion       = 4 // newest (flexible) version either value reads
)

// KeyKind says which record a __consumer_offsets key belongs to. The key's
// schema version is the discriminator.
type KeyKind int8

const (
	// KeyOffset is an offset commit (key versions 0 and 1).
	KeyOffset KeyKind = iota + 1
	// KeyGroup is classic group metadata (key version 2).
	KeyGroup
	// KeyOther is a record this coordinator does not use (key version 9
	// and up: share groups, streams groups). Replay skips it.
	KeyOther
	// KeyConsumer is a KIP-848 consumer group record (key versions 3-8,
	// consumer_records.go); Member is set for the per-member ones.
	KeyConsumer
)

// Key is a decoded __consumer_offsets key.
type Key struct {
	Kind      KeyKind
	Version   int16
	Group     string
	Topic     string // KeyOffset only
	Partition int32  // KeyOffset only
	Member    string // KeyConsumer per-member records only
}

// OffsetValue is the value of an offset commit record (OffsetCommitValue).
type OffsetValue struct {
	Offset          int64
	LeaderEpoch     int32 // -1 when unknown (and in versions before 3)
	Metadata        string
	CommitTimestamp int64 // ms since the epoch
	ExpireTimestamp int64 // ms since the epoch; -1 when none (only version 1 stores it)
}

// GroupValue is the value of a group metadata record (GroupMetadataValue).
type GroupValue struct {
	ProtocolType          string
	Generation            int32
	Protocol              *string // nil when the group has no members
	Leader                *string // nil when the group has no members
	CurrentStateTimestamp int64   // ms; -1 when unknown (versions before 2)
	Members               []MemberValue
}

// MemberValue is one member inside a GroupValue.
type MemberValue struct {
	MemberID           string
	InstanceID         *string // static membership (version 3+)
	ClientID           string
	ClientHost         string
	RebalanceTimeoutMs int32 // version 1+; older records repeat the session timeout
	SessionTimeoutMs   int32
	Subscription       []byte // the member's metadata for the chosen protocol
	Assignment         []byte // what the leader assigned to it
}

// Errors returned by the decoders. They never reach clients: a record that
// does not decode is logged and skipped by the loader.
var (
	ErrTruncated    = errors.New("group: record truncated or malformed")
	ErrKeyVersion   = errors.New("group: unknown __consumer_offsets key version")
	ErrNotOffsetKey = errors.New("group: key is not an offset commit key")
	ErrValueVersion = errors.New("group: unknown __consumer_offsets value version")
)

// OffsetKeyBytes encodes an OffsetCommitKey (version 1).
func OffsetKeyBytes(group, topic string, partition int32) []byte {
	dst := make([]byte, 0, 2+2+len(group)+2+len(topic)+4)
	dst = kbin.AppendInt16(dst, offsetKeyVersion)
	dst = kbin.AppendString(dst, group)
	dst = kbin.AppendString(dst, topic)
	return kbin.AppendInt32(dst, partition)
}

// GroupKeyBytes encodes a GroupMetadataKey (version 2).
func GroupKeyBytes(group string) []byte {
	dst := make([]byte, 0, 2+2+len(group))
	dst = kbin.AppendInt16(dst, groupKeyVersion)
	return kbin.AppendString(dst, group)
}

// DecodeKey reads a __consumer_offsets key of any version.
func DecodeKey(b []byte) (Key, error) {
	r := kbin.Reader{Src: b}
	k := Key{Version: r.Int16()}
	if !r.Ok() {
		return k, ErrTruncated
	}
	switch {
	case k.Version == 0 || k.Version == 1:
		k.Kind = KeyOffset
		k.Group = r.String()
		k.Topic = r.String()
		k.Partition = r.Int32()
	case k.Version == 2:
		k.Kind = KeyGroup
		k.Group = r.String()
	case k.Version >= consumerMetadataKey && k.Version <= consumerCurrentAssignmentKey:
		_, group, member, err := decodeConsumerKey(b)
		if err != nil {
			return k, err
		}
		k.Kind, k.Group, k.Member = KeyConsumer, group, member
		return k, nil
	case k.Version > consumerCurrentAssignmentKey:
		k.Kind = KeyOther
		return k, nil
	default:
		return k, fmt.Errorf("%w: %d", ErrKeyVersion, k.Version)
	}
	if err := r.Complete(); err != nil {
		return k, ErrTruncated
	}
	return k, nil
}

// OffsetValueBytes encodes an OffsetCommitValue the way Kafka 2.1+ does:
// version 3 normally, version 1 when the commit carries an explicit expire
// timestamp (OffsetCommit v2-v4 with a retention time).
func OffsetValueBytes(v OffsetValue) []byte {
	version := int16(offsetValueVersion)
	if v.ExpireTimestamp >= 0 {
		version = offsetValueVersionExpiring
	}
	return appendOffsetValue(nil, v, version)
}

func appendOffsetValue(dst []byte, v OffsetValue, version int16) []byte {
	flexible := version >= 4
	dst = kbin.AppendInt16(dst, version)
	dst = kbin.AppendInt64(dst, v.Offset)
	if version >= 3 {
		dst = kbin.AppendInt32(dst, v.LeaderEpoch)
	}
	dst = appendString(dst, v.Metadata, flexible)
	dst = kbin.AppendInt64(dst, v.CommitTimestamp)
	if version == 1 {
		dst = kbin.AppendInt64(dst, v.ExpireTimestamp)
	}
	if flexible {
		dst = kbin.AppendUvarint(dst, 0) // no tagged fields
	}
	return dst
}

// DecodeOffsetValue reads an OffsetCommitValue of versions 0-4. A newer
// version is read as version 4 (its new fields can only be tagged fields,
// which are skipped), as Kafka does since KIP-915.
func DecodeOffsetValue(b []byte) (OffsetValue, error) {
	r := kbin.Reader{Src: b}
	version := r.Int16()
	v := OffsetValue{LeaderEpoch: -1, ExpireTimestamp: -1}
	if !r.Ok() {
		return v, ErrTruncated
	}
	if version < 0 {
		return v, fmt.Errorf("%w: offset value %d", ErrValueVersion, version)
	}
	version = min(version, maxKnownValueVersion)
	flexible := version >= 4
	v.Offset = r.Int64()
	if version >= 3 {
		v.LeaderEpoch = r.Int32()
	}
	v.Metadata = readString(&r, flexible)
	v.CommitTimestamp = r.Int64()
	if version == 1 {
		v.ExpireTimestamp = r.Int64()
	}
	if flexible {
		skipTags(&r)
	}
	if r.Complete() != nil {
		return v, ErrTruncated
	}
	return v, nil
}

// GroupValueBytes encodes a GroupMetadataValue at version 3 (Kafka 2.3+).
func GroupValueBytes(v GroupValue) []byte {
	return appendGroupValue(nil, v, groupValueVersion)
}

func appendGroupValue(dst []byte, v GroupValue, version int16) []byte {
	flexible := version >= 4
	dst = kbin.AppendInt16(dst, version)
	dst = appendString(dst, v.ProtocolType, flexible)
	dst = kbin.AppendInt32(dst, v.Generation)
	dst = appendNullableString(dst, v.Protocol, flexible)
	dst = appendNullableString(dst, v.Leader, flexible)
	if version >= 2 {
		dst = kbin.AppendInt64(dst, v.CurrentStateTimestamp)
	}
	if flexible {
		dst = kbin.AppendCompactArrayLen(dst, len(v.Members))
	} else {
		dst = kbin.AppendArrayLen(dst, len(v.Members))
	}
	for _, m := range v.Members {
		dst = appendString(dst, m.MemberID, flexible)
		if version >= 3 {
			dst = appendNullableString(dst, m.InstanceID, flexible)
		}
		dst = appendString(dst, m.ClientID, flexible)
		dst = appendString(dst, m.ClientHost, flexible)
		if version >= 1 {
			dst = kbin.AppendInt32(dst, m.RebalanceTimeoutMs)
		}
		dst = kbin.AppendInt32(dst, m.SessionTimeoutMs)
		dst = appendBytes(dst, m.Subscription, flexible)
		dst = appendBytes(dst, m.Assignment, flexible)
		if flexible {
			dst = kbin.AppendUvarint(dst, 0)
		}
	}
	if flexible {
		dst = kbin.AppendUvarint(dst, 0)
	}
	return dst
}

// DecodeGroupValue reads a GroupMetadataValue of versions 0-4 (newer ones
// as version 4). Byte slices in the result are copies: b may be reused.
func DecodeGroupValue(b []byte) (GroupValue, error) {
	r := kbin.Reader{Src: b}
	version := r.Int16()
	v := GroupValue{CurrentStateTimestamp: -1}
	if !r.Ok() {
		return v, ErrTruncated
	}
	if version < 0 {
		return v, fmt.Errorf("%w: group value %d", ErrValueVersion, version)
	}
	version = min(version, maxKnownValueVersion)
	flexible := version >= 4
	v.ProtocolType = readString(&r, flexible)
	v.Generation = r.Int32()
	v.Protocol = readNullableString(&r, flexible)
	v.Leader = readNullableString(&r, flexible)
	if version >= 2 {
		v.CurrentStateTimestamp = r.Int64()
	}
	var n int32
	if flexible {
		n = r.CompactArrayLen()
	} else {
		n = r.ArrayLen()
	}
	if n < 0 || !r.Ok() {
		return v, ErrTruncated
	}
	if n > 0 {
		v.Members = make([]MemberValue, 0, n)
	}
	for i := int32(0); i < n && r.Ok(); i++ {
		var m MemberValue
		m.MemberID = readString(&r, flexible)
		if version >= 3 {
			m.InstanceID = readNullableString(&r, flexible)
		}
		m.ClientID = readString(&r, flexible)
		m.ClientHost = readString(&r, flexible)
		if version >= 1 {
			m.RebalanceTimeoutMs = r.Int32()
		}
		m.SessionTimeoutMs = r.Int32()
		if version < 1 {
			m.RebalanceTimeoutMs = m.SessionTimeoutMs
		}
		m.Subscription = readBytes(&r, flexible)
		m.Assignment = readBytes(&r, flexible)
		if flexible {
			skipTags(&r)
		}
		v.Members = append(v.Members, m)
	}
	if flexible {
		skipTags(&r)
	}
	if r.Complete() != nil {
		return v, ErrTruncated
	}
	return v, nil
}

func appendString(dst []byte, s string, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactString(dst, s)
	}
	return kbin.AppendString(dst, s)
}

func appendNullableString(dst []byte, s *string, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactNullableString(dst, s)
	}
	return kbin.AppendNullableString(dst, s)
}

func appendBytes(dst, b []byte, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactBytes(dst, b)
	}
	return kbin.AppendBytes(dst, b)
}

func readString(r *kbin.Reader, flexible bool) string {
	if flexible {
		return r.CompactString()
	}
	return r.String()
}

func readNullableString(r *kbin.Reader, flexible bool) *string {
	if flexible {
		return r.CompactNullableString()
	}
	return r.NullableString()
}

// readBytes reads a non-nullable byte array and copies it out of the
// record buffer.
func readBytes(r *kbin.Reader, flexible bool) []byte {
	var b []byte
	if flexible {
		b = r.CompactBytes()
	} else {
		b = r.Bytes()
	}
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// skipTags skips a tagged-field section: a count, then (tag, size, bytes).
func skipTags(r *kbin.Reader) {
	n := r.Uvarint()
	for i := uint32(0); i < n && r.Ok(); i++ {
		r.Uvarint() // tag
		size := r.Uvarint()
		if size > uint32(len(r.Src)) {
			r.Span(-1) // marks the reader bad
			return
		}
		r.Span(int(size))
	}
}
