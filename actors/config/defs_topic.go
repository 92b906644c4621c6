package config

import (
	"slices"
	"strconv"
)

const (
	longMax = "9223372036854775807"
	intMax  = "2147483647"
	msHour  = 3600000
	msMin   = 60000
)

// FlushPolicy values of samsa.flush.policy, the durability of acknowledged
// writes: always fsync before acking each write; group several writes per
// fsync (the default: every ack is still durable); interval fsync every
// flush.ms / flush.messages; never leave it to the OS.
const (
	FlushAlways   = "always"
	FlushGroup    = "group"
	FlushInterval = "interval"
	FlushNever    = "never"
)

// topicDefs are the per-topic configs, by Kafka name. Each falls back to
// its broker synonyms (see doc.go for the order).
var topicDefs = []Def{
	{Name: "cleanup.policy", Type: List, Default: "delete",
		Check:    ListOf(true, "delete", "compact"),
		Synonyms: []Synonym{{Name: "log.cleanup.policy"}},
		Doc:      "delete: old segments are removed by retention; compact: the log cleaner keeps the latest record per key; both: compaction and retention."},
	{Name: "compression.type", Type: String, Default: "producer",
		Check:    OneOf("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
		Synonyms: []Synonym{{Name: "compression.type"}},
		Doc:      "Codec of stored batches; producer keeps what the producer sent."},
	{Name: "delete.retention.ms", Type: Long, Default: "86400000", Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "log.cleaner.delete.retention.ms"}},
		Doc:      "How long tombstones are kept in compacted topics."},
	{Name: "file.delete.delay.ms", Type: Long, Default: "60000", Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "log.segment.delete.delay.ms"}},
		Doc:      "Delay before a deleted segment's files leave the disk."},
	{Name: "flush.messages", Type: Long, Default: longMax, Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "log.flush.interval.messages"}},
		Doc:      "With samsa.flush.policy=interval: fsync after this many messages."},
	{Name: "flush.ms", Type: Long, Default: longMax, Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "log.flush.interval.ms"}, {Name: "log.flush.scheduler.interval.ms"}},
		Doc:      "With samsa.flush.policy=interval: fsync at least this often."},
	{Name: "follower.replication.throttled.replicas", Type: List, Default: "",
		Doc: "Replicas (partition:broker,... or *) whose followers follower.replication.throttled.rate slows while out of the ISR (cluster mode)."},
	{Name: "index.interval.bytes", Type: Int, Default: "4096", Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "log.index.interval.bytes"}},
		Doc:      "Bytes of log between two offset index entries."},
	{Name: "leader.replication.throttled.replicas", Type: List, Default: "",
		Doc: "Replicas (partition:broker,... or *) whose leaders leader.replication.throttled.rate slows toward followers out of the ISR (cluster mode)."},
	{Name: "max.compaction.lag.ms", Type: Long, Default: longMax, Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "log.cleaner.max.compaction.lag.ms"}},
		Doc:      "Longest time a record stays ineligible for compaction."},
	{Name: "max.message.bytes", Type: Int, Default: "1048588", Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "message.max.bytes"}},
		Doc:      "Largest record batch the topic accepts, after compression."},
	{Name: "message.timestamp.after.max.ms", Type: Long, Default: "3600000", Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "log.message.timestamp.after.max.ms"}},
		Doc:      "With CreateTime: how far in the future a batch timestamp may be."},
	{Name: "message.timestamp.before.max.ms", Type: Long, Default: longMax, Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "log.message.timestamp.before.max.ms"}},
		Doc:      "With CreateTime: how far in the past a batch timestamp may be."},
	{Name: "message.timestamp.type", Type: String, Default: "CreateTime",
		Check:    OneOf("CreateTime", "LogAppendTime"),
		Synonyms: []Synonym{{Name: "log.message.timestamp.type"}},
		Doc:      "CreateTime keeps the producer's timestamps; LogAppendTime stamps batches with the broker's clock."},
	{Name: "min.cleanable.dirty.ratio", Type: Double, Default: "0.5", Check: FractionBetween(0, 1),
		Synonyms: []Synonym{{Name: "log.cleaner.min.cleanable.ratio"}},
		Doc:      "Share of uncompacted log that triggers compaction."},
	{Name: "min.compaction.lag.ms", Type: Long, Default: "0", Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "log.cleaner.min.compaction.lag.ms"}},
		Doc:      "Shortest time a record stays uncompacted."},
	{Name: "min.insync.replicas", Type: Int, Default: "1", Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "min.insync.replicas"}},
		Doc:      "With acks=all: replicas that must have a write before it is acknowledged."},
	{Name: "preallocate", Type: Boolean, Default: "false",
		Synonyms: []Synonym{{Name: "log.preallocate"}},
		Doc:      "Accepted for Kafka compatibility. samsa always reserves disk space ahead of the active segment in 1 MiB steps without changing the file's size, whatever this says."},
	{Name: "retention.bytes", Type: Long, Default: "-1",
		Synonyms: []Synonym{{Name: "log.retention.bytes"}},
		Doc:      "Largest size of a partition before old segments are deleted; -1: no limit."},
	{Name: "retention.ms", Type: Long, Default: "604800000", Check: AtLeast(-1),
		Synonyms: []Synonym{{Name: "log.retention.ms"}, {Name: "log.retention.minutes", Scale: msMin}, {Name: "log.retention.hours", Scale: msHour}},
		Doc:      "How long segments are kept; -1: forever."},
	{Name: "samsa.flush.policy", Type: String, Default: FlushGroup,
		Check:    OneOf(FlushAlways, FlushGroup, FlushInterval, FlushNever),
		Synonyms: []Synonym{{Name: "samsa.log.flush.policy"}},
		Doc:      "Durability of acknowledged writes: always (fsync each write), group (several writes per fsync, every ack durable; the default), interval (fsync per flush.ms/flush.messages), never (the OS decides)."},
	{Name: "segment.bytes", Type: Int, Default: "1073741824", Check: AtLeast(14),
		Synonyms: []Synonym{{Name: "log.segment.bytes"}},
		Doc:      "Size at which a segment is rolled."},
	{Name: "segment.index.bytes", Type: Int, Default: "10485760", Check: AtLeast(4),
		Synonyms: []Synonym{{Name: "log.index.size.max.bytes"}},
		Doc:      "Largest size of a segment's offset and time index."},
	{Name: "segment.jitter.ms", Type: Long, Default: "0", Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "log.roll.jitter.ms"}, {Name: "log.roll.jitter.hours", Scale: msHour}},
		Doc:      "Random jitter subtracted from segment.ms."},
	{Name: "segment.ms", Type: Long, Default: "604800000", Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "log.roll.ms"}, {Name: "log.roll.hours", Scale: msHour}},
		Doc:      "Age at which a segment is rolled even if not full."},
	{Name: "unclean.leader.election.enable", Type: Boolean, Default: "false",
		Synonyms: []Synonym{{Name: "unclean.leader.election.enable"}},
		Doc:      "Allow an out-of-sync replica to become leader (cluster mode)."},
}

var topicIndex = index(topicDefs)

func index(defs []Def) map[string]*Def {
	m := make(map[string]*Def, len(defs))
	for i := range defs {
		m[defs[i].Name] = &defs[i]
	}
	return m
}

// TopicDef returns the definition of a topic config.
func TopicDef(name string) (*Def, bool) {
	d, ok := topicIndex[name]
	return d, ok
}

// TopicDefs returns every topic config definition, sorted by name.
func TopicDefs() []*Def { return sortedDefs(topicIndex) }

func sortedDefs(m map[string]*Def) []*Def {
	out := make([]*Def, 0, len(m))
	for _, d := range m {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Def) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// ValidateTopic checks a topic config key and value: an unknown key or a
// bad value is an error that names the key.
func ValidateTopic(name, value string) error {
	d, ok := TopicDef(name)
	if !ok {
		return unknownTopicKey(name)
	}
	return d.Validate(value)
}

func unknownTopicKey(name string) error {
	return &unknownKeyError{name: name, kind: "topic"}
}

type unknownKeyError struct{ name, kind string }

func (e *unknownKeyError) Error() string {
	return "config: unknown " + e.kind + " config " + strconv.Quote(e.name)
}

func (e *unknownKeyError) Unwrap() error { return ErrUnknown }
