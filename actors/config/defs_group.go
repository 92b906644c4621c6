package config

import (
	"fmt"
	"regexp"
	"strings"
)

// groupNote ends every group config's documentation.
const groupNote = " samsa stores and describes the value; it has no effect yet (consumer groups use the broker's group.consumer.* value)."

// groupDefs are Kafka 4.1's group configs (GroupConfig), set per group with
// IncrementalAlterConfigs on a GROUP resource. Each defaults to its broker
// synonym's value (group.consumer.*, group.share.*, group.streams.*), or to
// the def's Default when it has none. They tune KIP-848 consumer groups,
// share groups and streams groups; share groups apply theirs
// (GroupConfigActs), share.delivery.count.limit being Kafka 4.2's
// (KIP-1240).
var groupDefs = []Def{
	{Name: "consumer.session.timeout.ms", Type: Int, Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "group.consumer.session.timeout.ms"}},
		Doc:      "Timeout to detect client failures of a consumer group (KIP-848) member: one that sends no heartbeat for this long is fenced (from each member's next heartbeat on)."},
	{Name: "consumer.heartbeat.interval.ms", Type: Int, Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "group.consumer.heartbeat.interval.ms"}},
		Doc:      "Heartbeat interval given to consumer group (KIP-848) members (in every heartbeat answer)."},
	{Name: "share.session.timeout.ms", Type: Int, Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "group.share.session.timeout.ms"}},
		Doc:      "Timeout to detect client failures of a share group member."},
	{Name: "share.heartbeat.interval.ms", Type: Int, Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "group.share.heartbeat.interval.ms"}},
		Doc:      "Heartbeat interval given to share group members."},
	{Name: "share.record.lock.duration.ms", Type: Int, Check: AtLeast(1000),
		Synonyms: []Synonym{{Name: "group.share.record.lock.duration.ms"}},
		Doc:      "How long a share group member holds a record's acquisition lock."},
	{Name: "share.delivery.count.limit", Type: Int, Check: AtLeast(2),
		Synonyms: []Synonym{{Name: "group.share.delivery.count.limit"}},
		Doc:      "How many times a share group delivers a record before archiving it (KIP-1240's group config, Kafka 4.2)."},
	{Name: "share.auto.offset.reset", Type: String, Default: "latest", Check: shareOffsetReset,
		Doc: "Where a share group starts on a partition: latest, earliest, or by_duration:<ISO-8601 duration> back from now (the first offset whose timestamp is at or after now less the duration)."},
	{Name: "share.isolation.level", Type: String, Default: "read_uncommitted", Check: OneOf("read_committed", "read_uncommitted"),
		Doc: "Whether a share group delivers only committed transactional records (read_committed) or all (read_uncommitted)." + groupNote},
	{Name: "streams.session.timeout.ms", Type: Int, Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "group.streams.session.timeout.ms"}},
		Doc:      "Timeout to detect client failures of a streams group (KIP-1071) member." + groupNote},
	{Name: "streams.heartbeat.interval.ms", Type: Int, Check: AtLeast(1),
		Synonyms: []Synonym{{Name: "group.streams.heartbeat.interval.ms"}},
		Doc:      "Heartbeat interval given to streams group members." + groupNote},
	{Name: "streams.num.standby.replicas", Type: Int, Check: AtLeast(0),
		Synonyms: []Synonym{{Name: "group.streams.num.standby.replicas"}},
		Doc:      "Standby replicas of each task of a streams group." + groupNote},
}

// consumerGroupBrokerDefs are the broker configs of KIP-848 consumer
// groups that samsa acts on (actors/coordinator passes them to the core;
// the bounds of group configs are checked by actors/metadata).
var consumerGroupBrokerDefs = []Def{
	{Name: "group.consumer.session.timeout.ms", Type: Int, Default: "45000", Check: AtLeast(1), Doc: "A consumer group (KIP-848) member that sends no heartbeat for this long is fenced; also the default consumer.session.timeout.ms of groups."},
	{Name: "group.consumer.heartbeat.interval.ms", Type: Int, Default: "5000", Check: AtLeast(1), Doc: "Heartbeat interval told to consumer group (KIP-848) members; also the default consumer.heartbeat.interval.ms of groups."},
	{Name: "group.consumer.assignors", Type: List, Default: "uniform,range", Check: consumerAssignors, Doc: "Server-side assignors consumer group (KIP-848) members may choose (group.remote.assignor); the first is the default. samsa has uniform and range."},
	{Name: "group.consumer.max.size", Type: Int, Default: "2147483647", Check: AtLeast(1), Doc: "Most members a consumer group (KIP-848) may have."},
	{Name: "group.consumer.min.session.timeout.ms", Type: Int, Default: "45000", Check: AtLeast(1), Doc: "Smallest consumer.session.timeout.ms a group may set. (IncrementalAlterConfigs on a GROUP resource answers INVALID_CONFIG outside the bounds)."},
	{Name: "group.consumer.max.session.timeout.ms", Type: Int, Default: "60000", Check: AtLeast(1), Doc: "Largest consumer.session.timeout.ms a group may set. (IncrementalAlterConfigs on a GROUP resource answers INVALID_CONFIG outside the bounds)."},
	{Name: "group.consumer.min.heartbeat.interval.ms", Type: Int, Default: "5000", Check: AtLeast(1), Doc: "Smallest consumer.heartbeat.interval.ms a group may set. (IncrementalAlterConfigs on a GROUP resource answers INVALID_CONFIG outside the bounds)."},
	{Name: "group.consumer.max.heartbeat.interval.ms", Type: Int, Default: "15000", Check: AtLeast(1), Doc: "Largest consumer.heartbeat.interval.ms a group may set. (IncrementalAlterConfigs on a GROUP resource answers INVALID_CONFIG outside the bounds)."},
	{Name: "group.consumer.migration.policy", Type: String, Default: "bidirectional", Check: OneOf("disabled", "downgrade", "upgrade", "bidirectional"),
		Doc: "Online migration between the classic and consumer (KIP-848) group protocols: upgrade lets a consumer protocol member turn a classic group with members into a consumer group, downgrade turns a consumer group whose last consumer protocol member left back into a classic group; bidirectional allows both, disabled neither (empty groups always convert)."},
}

func consumerAssignors(v string) error {
	names := ParseList(v)
	if len(names) == 0 {
		return fmt.Errorf("must name at least one assignor")
	}
	for _, n := range names {
		if n != "uniform" && n != "range" {
			return fmt.Errorf("unknown assignor %q: samsa has uniform and range", n)
		}
	}
	return nil
}

// groupBrokerDefs are the broker configs group configs default to and are
// bounded by. Ignored: samsa has no share or streams groups, and reads the
// bounds only to check group configs.
var groupBrokerDefs = ignored([]Def{
	{Name: "group.streams.session.timeout.ms", Type: Int, Default: "45000", Check: AtLeast(1), Doc: "Default streams.session.timeout.ms of groups."},
	{Name: "group.streams.min.session.timeout.ms", Type: Int, Default: "45000", Check: AtLeast(1), Doc: "Smallest streams.session.timeout.ms a group may set."},
	{Name: "group.streams.max.session.timeout.ms", Type: Int, Default: "60000", Check: AtLeast(1), Doc: "Largest streams.session.timeout.ms a group may set."},
	{Name: "group.streams.heartbeat.interval.ms", Type: Int, Default: "5000", Check: AtLeast(1), Doc: "Default streams.heartbeat.interval.ms of groups."},
	{Name: "group.streams.min.heartbeat.interval.ms", Type: Int, Default: "5000", Check: AtLeast(1), Doc: "Smallest streams.heartbeat.interval.ms a group may set."},
	{Name: "group.streams.max.heartbeat.interval.ms", Type: Int, Default: "15000", Check: AtLeast(1), Doc: "Largest streams.heartbeat.interval.ms a group may set."},
	{Name: "group.streams.num.standby.replicas", Type: Int, Default: "0", Check: AtLeast(0), Doc: "Default streams.num.standby.replicas of groups."},
	{Name: "group.streams.max.standby.replicas", Type: Int, Default: "2", Check: AtLeast(0), Doc: "Largest streams.num.standby.replicas a group may set."},
})

func ignored(defs []Def) []Def {
	for i := range defs {
		defs[i].Ignored = true
		defs[i].Doc += " samsa uses it only to check group configs (share and streams groups are not served yet)."
	}
	return defs
}

var groupIndex = index(groupDefs)

// GroupDef returns the definition of a group config.
func GroupDef(name string) (*Def, bool) {
	d, ok := groupIndex[name]
	return d, ok
}

// GroupDefs returns every group config definition, sorted by name.
func GroupDefs() []*Def { return sortedDefs(groupIndex) }

// isoDuration is Java's Duration.parse format, non-negative: PnDTnHnMn.nS.
var isoDuration = regexp.MustCompile(`(?i)^P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:[.,]\d{0,9})?S)?)?$`)

func shareOffsetReset(v string) error {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "latest" || v == "earliest" {
		return nil
	}
	if d, ok := strings.CutPrefix(v, "by_duration:"); ok && isoDuration.MatchString(d) && !strings.HasSuffix(d, "t") && d != "p" {
		return nil
	}
	return fmt.Errorf("must be latest, earliest or by_duration:<non-negative ISO-8601 duration>")
}

// ResolveGroup resolves a group config: the group's own value
// (SourceGroup), else its default, the broker synonym's effective value or
// the def's Default (SourceDefault), as Kafka reports it: one synonym, the
// winner.
func ResolveGroup(name string, group map[string]string, l Layers) (Entry, bool) {
	def, ok := GroupDef(name)
	if !ok {
		return Entry{}, false
	}
	win := SynonymValue{Name: name, Value: groupDefault(def, l), Source: SourceDefault}
	if v, ok := group[name]; ok {
		win = SynonymValue{Name: name, Value: v, Source: SourceGroup}
	}
	return entryFor(def, []SynonymValue{win}, false), true
}

func groupDefault(def *Def, l Layers) string {
	for _, s := range def.Synonyms {
		if e, ok := ResolveBroker(s.Name, l); ok && !e.Null {
			return e.Value
		}
	}
	return def.Default
}

// ValidateGroup checks a group's configs together, after each passed its
// def's Validate: the effective values (group over defaults) against the
// broker's bounds, and every session timeout above its heartbeat interval,
// with Kafka's messages.
func ValidateGroup(group map[string]string, l Layers) error {
	get := func(name string) int64 {
		e, _ := ResolveGroup(name, group, l)
		return ParseInt(e.Value)
	}
	broker := func(name string) int64 {
		e, _ := ResolveBroker(name, l)
		return ParseInt(e.Value)
	}
	type bound struct{ key, min, max string }
	var bounds []bound
	for _, kind := range []string{"consumer", "share"} {
		bounds = append(bounds,
			bound{kind + ".heartbeat.interval.ms", "group." + kind + ".min.heartbeat.interval.ms", "group." + kind + ".max.heartbeat.interval.ms"},
			bound{kind + ".session.timeout.ms", "group." + kind + ".min.session.timeout.ms", "group." + kind + ".max.session.timeout.ms"})
	}
	bounds = append(bounds,
		bound{"share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
		bound{"share.delivery.count.limit", "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"},
		bound{"streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"},
		bound{"streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"},
		bound{"streams.num.standby.replicas", "", "group.streams.max.standby.replicas"})
	for _, b := range bounds {
		v := get(b.key)
		if b.min != "" && v < broker(b.min) {
			return fmt.Errorf("%s must be greater than or equal to %s", b.key, b.min)
		}
		if v > broker(b.max) {
			return fmt.Errorf("%s must be less than or equal to %s", b.key, b.max)
		}
	}
	for _, kind := range []string{"consumer", "share", "streams"} {
		session, heartbeat := kind+".session.timeout.ms", kind+".heartbeat.interval.ms"
		if get(session) <= get(heartbeat) {
			return fmt.Errorf("%s must be greater than %s", session, heartbeat)
		}
	}
	return nil
}
