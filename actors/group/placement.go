package group

import "unicode/utf16"

// DefaultOffsetsTopicPartitions is Kafka's offsets.topic.num.partitions
// default: the number of __consumer_offsets partitions groups spread over.
const DefaultOffsetsTopicPartitions = 50

// PartitionFor is the __consumer_offsets partition that stores groupID's
// records; the leader of that partition is the group's coordinator, which
// FindCoordinator returns. It must agree bit for bit with Kafka, since a
// client or a Kafka tool may compute it too and data written by Kafka must
// stay where Kafka put it:
//
//	abs(javaStringHashCode(groupID)) % numPartitions
//
// where abs is Kafka's Utils.abs (MinInt32 maps to 0, not to itself and not
// to n & 0x7fffffff). numPartitions must be positive; PartitionFor returns 0
// otherwise.
func PartitionFor(groupID string, numPartitions int32) int32 {
	if numPartitions <= 0 {
		return 0
	}
	return kafkaAbs(JavaStringHashCode(groupID)) % numPartitions
}

// JavaStringHashCode is java.lang.String#hashCode of s: s[0]*31^(n-1) + ...
// + s[n-1] over UTF-16 code units, in wrapping int32 arithmetic. Go strings
// are UTF-8, so s is converted to code units first; characters outside the
// Basic Multilingual Plane become surrogate pairs, as in Java. Invalid UTF-8
// bytes count as U+FFFD, which is what Kafka's UTF-8 decoding produces for
// a malformed group id.
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r < 0x10000 {
			h = 31*h + int32(r)
			continue
		}
		hi, lo := utf16.EncodeRune(r)
		h = 31*h + int32(hi)
		h = 31*h + int32(lo)
	}
	return h
}

// kafkaAbs is Kafka's Utils.abs.
func kafkaAbs(n int32) int32 {
	switch {
	case n == -1<<31:
		return 0
	case n < 0:
		return -n
	default:
		return n
	}
}
