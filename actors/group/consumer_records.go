package group

import (
	"bytes"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
)

// Key versions (record types) of KIP-848 consumer group records, as Kafka
// 4 writes them to __consumer_offsets. Each key is the int16 type then
// the group id (and member id) as int16-length strings; each value is an
// int16 version (0) then a flexible struct ending in a tagged-field
// section. See doc.go, "Consumer group records".
const (
	// ConsumerGroupMetadata: the group epoch.
	consumerMetadataKey int16 = iota + 3
	// ConsumerGroupPartitionMetadata: the subscribed topics.
	consumerPartitionMetaKey
	// ConsumerGroupMemberMetadata: one member's subscription and client.
	consumerMemberMetaKey
	// ConsumerGroupTargetAssignmentMetadata: the assignment epoch.
	consumerTargetMetaKey
	// ConsumerGroupTargetAssignmentMember: one member's target.
	consumerTargetMemberKey
	// ConsumerGroupCurrentMemberAssignment: one member's epochs and what
	// it owns.
	consumerCurrentAssignmentKey
)

func consumerKey(kind int16, group string, member *string) []byte {
	dst := kbin.AppendInt16(nil, kind)
	dst = kbin.AppendString(dst, group)
	if member != nil {
		dst = kbin.AppendString(dst, *member)
	}
	return dst
}

func noTags(dst []byte) []byte { return kbin.AppendUvarint(dst, 0) }

// appendPartitions writes []TopicPartitions{TopicId, Partitions, tags}.
func appendPartitions(dst []byte, p partitions) []byte {
	ids := p.sortedTopics()
	dst = kbin.AppendCompactArrayLen(dst, len(ids))
	for _, id := range ids {
		dst = kbin.AppendUuid(dst, id)
		dst = kbin.AppendCompactArrayLen(dst, len(p[id]))
		for _, n := range p[id] {
			dst = kbin.AppendInt32(dst, n)
		}
		dst = noTags(dst)
	}
	return dst
}

func readPartitions(r *kbin.Reader) partitions {
	out := partitions{}
	n := r.CompactArrayLen()
	for i := int32(0); i < n && r.Ok(); i++ {
		id := r.Uuid()
		m := r.CompactArrayLen()
		for j := int32(0); j < m && r.Ok(); j++ {
			out.add(id, r.Int32())
		}
		skipTags(r)
	}
	return out
}

func readStrings(r *kbin.Reader) []string {
	n := r.CompactArrayLen()
	var out []string
	for i := int32(0); i < n && r.Ok(); i++ {
		out = append(out, r.CompactString())
	}
	return out
}

// consumerMetadataRecord is ConsumerGroupMetadata: the group epoch (and,
// as tag 1, the creation time).
func consumerMetadataRecord(group string, epoch int32) Record {
	v := kbin.AppendInt16(nil, 0)
	v = kbin.AppendInt32(v, epoch)
	v = noTags(v)
	return Record{Key: consumerKey(consumerMetadataKey, group, nil), Value: v}
}

// consumerPartitionMetadataRecord is ConsumerGroupPartitionMetadata: the
// subscribed topics' ids, names and partition counts (no racks).
func consumerPartitionMetadataRecord(group string, topics map[string]TopicMeta) Record {
	v := kbin.AppendInt16(nil, 0)
	names := TopicMap(topics).Names()
	v = kbin.AppendCompactArrayLen(v, len(names))
	for _, name := range names {
		t := topics[name]
		v = kbin.AppendUuid(v, t.ID)
		v = kbin.AppendCompactString(v, name)
		v = kbin.AppendInt32(v, t.Partitions)
		v = kbin.AppendCompactArrayLen(v, 0)
		v = noTags(v)
	}
	v = noTags(v)
	return Record{Key: consumerKey(consumerPartitionMetaKey, group, nil), Value: v}
}

func consumerMemberMetadataRecord(group string, m *cmember) Record {
	v := kbin.AppendInt16(nil, 0)
	v = kbin.AppendCompactNullableString(v, optional(m.instanceID))
	v = kbin.AppendCompactNullableString(v, m.rackID)
	v = kbin.AppendCompactString(v, m.clientID)
	v = kbin.AppendCompactString(v, m.clientHost)
	v = kbin.AppendCompactArrayLen(v, len(m.topicNames))
	for _, n := range m.topicNames {
		v = kbin.AppendCompactString(v, n)
	}
	v = kbin.AppendCompactNullableString(v, m.regex)
	v = kbin.AppendInt32(v, int32(m.rebalanceTimeout.Milliseconds()))
	v = kbin.AppendCompactNullableString(v, m.assignor)
	if m.classic == nil {
		v = noTags(v)
	} else {
		// Tag 0, ClassicMemberMetadata, a nullable struct: int8 1
		// (present), int32 sessionTimeoutMs, []{name, bytes metadata}.
		c := kbin.AppendInt8(nil, 1)
		c = kbin.AppendInt32(c, int32(m.classic.sessionTimeout.Milliseconds()))
		c = kbin.AppendCompactArrayLen(c, len(m.classic.protocols))
		for _, p := range m.classic.protocols {
			c = kbin.AppendCompactString(c, p.name)
			c = kbin.AppendCompactBytes(c, p.metadata)
			c = noTags(c)
		}
		c = noTags(c)
		v = kbin.AppendUvarint(v, 1)
		v = kbin.AppendUvarint(v, 0)
		v = kbin.AppendUvarint(v, uint32(len(c)))
		v = append(v, c...)
	}
	return Record{Key: consumerKey(consumerMemberMetaKey, group, &m.id), Value: v}
}

// readMemberTags reads ConsumerGroupMemberMetadata's tagged fields: tag
// 0 is a classic member's metadata (nil when absent), others are skipped.
func readMemberTags(r *kbin.Reader) *classicInfo {
	var out *classicInfo
	n := r.Uvarint()
	for i := uint32(0); i < n && r.Ok(); i++ {
		tag, size := r.Uvarint(), r.Uvarint()
		if size > uint32(len(r.Src)) {
			r.Span(-1)
			return nil
		}
		body := kbin.Reader{Src: r.Span(int(size))}
		if tag != 0 || body.Int8() < 0 {
			continue
		}
		out = &classicInfo{sessionTimeout: time.Duration(body.Int32()) * time.Millisecond}
		np := body.CompactArrayLen()
		for j := int32(0); j < np && body.Ok(); j++ {
			name := body.CompactString()
			meta := bytes.Clone(body.CompactBytes())
			skipTags(&body)
			out.protocols = append(out.protocols, protocol{name: name, metadata: nonNil(meta)})
		}
		skipTags(&body)
		if !body.Ok() {
			r.Span(-1)
			return nil
		}
		if len(out.protocols) > 0 {
			out.protocol = out.protocols[0].name
		}
	}
	return out
}

func consumerTargetMetadataRecord(group string, epoch int32) Record {
	v := kbin.AppendInt16(nil, 0)
	v = kbin.AppendInt32(v, epoch)
	v = noTags(v)
	return Record{Key: consumerKey(consumerTargetMetaKey, group, nil), Value: v}
}

func consumerTargetMemberRecord(group, member string, p partitions) Record {
	v := kbin.AppendInt16(nil, 0)
	v = appendPartitions(v, p)
	v = noTags(v)
	return Record{Key: consumerKey(consumerTargetMemberKey, group, &member), Value: v}
}

func consumerCurrentAssignmentRecord(group string, m *cmember) Record {
	v := kbin.AppendInt16(nil, 0)
	v = kbin.AppendInt32(v, m.epoch)
	v = kbin.AppendInt32(v, m.prevEpoch)
	v = kbin.AppendInt8(v, int8(m.state))
	v = appendPartitions(v, m.assigned)
	v = appendPartitions(v, m.revoking)
	v = noTags(v)
	return Record{Key: consumerKey(consumerCurrentAssignmentKey, group, &m.id), Value: v}
}

// consumerMemberTombstones deletes a member's three records, current
// assignment first (Kafka's order).
func consumerMemberTombstones(group, member string) []Record {
	return []Record{
		{Key: consumerKey(consumerCurrentAssignmentKey, group, &member)},
		{Key: consumerKey(consumerTargetMemberKey, group, &member)},
		{Key: consumerKey(consumerMemberMetaKey, group, &member)},
	}
}

// consumerGroupTombstones deletes the group-level records.
func consumerGroupTombstones(group string) []Record {
	return []Record{
		{Key: consumerKey(consumerTargetMetaKey, group, nil)},
		{Key: consumerKey(consumerPartitionMetaKey, group, nil)},
		{Key: consumerKey(consumerMetadataKey, group, nil)},
	}
}

// decodeConsumerKey reads the group and member of a key of type 3-8.
func decodeConsumerKey(b []byte) (kind int16, group, member string, err error) {
	r := kbin.Reader{Src: b}
	kind = r.Int16()
	group = r.String()
	switch kind {
	case consumerMemberMetaKey, consumerTargetMemberKey, consumerCurrentAssignmentKey:
		member = r.String()
	case consumerMetadataKey, consumerPartitionMetaKey, consumerTargetMetaKey:
	default:
		return kind, "", "", ErrKeyVersion
	}
	if r.Complete() != nil {
		return kind, "", "", ErrTruncated
	}
	return kind, group, member, nil
}

// valueReader opens a consumer group value: version 0 (newer versions
// are read as 0, their additions being tagged fields).
func valueReader(b []byte) (*kbin.Reader, error) {
	r := &kbin.Reader{Src: b}
	if v := r.Int16(); !r.Ok() || v < 0 {
		return nil, ErrValueVersion
	}
	return r, nil
}
