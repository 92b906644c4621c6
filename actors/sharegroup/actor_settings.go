package sharegroup

import (
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire/kerr"
)

// groupSettings are a share group's configs as the coordinator applies
// them: its group configs (IncrementalAlterConfigs on the GROUP
// resource, checked there against the broker's group.share.min/max.*
// bounds), each defaulting to its group.share.* broker config.
type groupSettings struct {
	reset             string // share.auto.offset.reset
	limits            Limits // share.record.lock.duration.ms, share.delivery.count.limit
	sessionTimeout    time.Duration
	heartbeatInterval time.Duration
}

// settingNames are the group configs the coordinator reads.
var settingNames = []string{
	"share.auto.offset.reset", "share.record.lock.duration.ms", "share.delivery.count.limit",
	"share.session.timeout.ms", "share.heartbeat.interval.ms",
}

// set applies one group config's effective value; a value that does not
// parse (the metadata actor validated it) leaves the broker's.
func (s *groupSettings) set(name, value string) {
	value = strings.TrimSpace(value)
	n, err := strconv.ParseInt(value, 10, 64)
	number := err == nil && n > 0
	switch {
	case name == "share.auto.offset.reset":
		s.reset = strings.ToLower(value)
	case name == "share.record.lock.duration.ms" && number:
		s.limits.LockDuration = time.Duration(n) * time.Millisecond
	case name == "share.delivery.count.limit" && number:
		s.limits.DeliveryLimit = int16(min(n, 1<<15-1))
	case name == "share.session.timeout.ms" && number:
		s.sessionTimeout = time.Duration(n) * time.Millisecond
	case name == "share.heartbeat.interval.ms" && number:
		s.heartbeatInterval = time.Duration(n) * time.Millisecond
	}
}

// settingsOf is a group's settings as last read, or the broker's.
func (a *coordinatorActor) settingsOf(group string) groupSettings {
	if s, ok := a.settings[group]; ok {
		return s
	}
	return groupSettings{reset: "latest", limits: a.cfg.Limits, sessionTimeout: a.cfg.SessionTimeout, heartbeatInterval: a.cfg.HeartbeatInterval}
}

// heartbeatWithSettings reads the group's configs before serving a
// heartbeat, so a change made with IncrementalAlterConfigs applies from
// the group's next heartbeat on: the interval it answers, the session
// timeout, the lock duration and delivery limit of its share partitions
// and where new ones start. A joining member without an id is given one
// (KIP-1082 has clients make their own, older ones leave it to the
// coordinator).
func (a *coordinatorActor) heartbeatWithSettings(c *Call, r *kmsg.ShareGroupHeartbeatRequest) {
	if r.MemberEpoch == 0 && r.MemberID == "" {
		r.MemberID = newMemberID()
	}
	s := a.settingsOf(r.GroupID)
	self, root, meta, e := a.self, a.root, a.meta, a.env
	// One config after the other, each asked from the previous reply (on
	// the metadata actor's goroutine, where s is then only touched).
	var ask func(i int)
	ask = func(i int) {
		if i == len(settingNames) {
			root.Send(self, &settingsKnown{c, s})
			return
		}
		e.Send(meta, &catalog.GroupConfig{Group: r.GroupID, Name: settingNames[i], Reply: func(v string, ok bool) {
			if ok {
				s.set(settingNames[i], v)
			}
			ask(i + 1)
		}})
	}
	ask(0)
}

// applySettings keeps a group's settings and gives its share partitions
// the new limits, then serves the heartbeat that read them.
func (a *coordinatorActor) applySettings(m *settingsKnown) {
	group := m.call.Req.Body.(*kmsg.ShareGroupHeartbeatRequest).GroupID
	a.settings[group] = m.settings
	for k, p := range a.parts {
		if k.group == group {
			p.SetLimits(m.settings.limits)
		}
	}
	env.Reply(m.call.Req, a.heartbeat(m.call, m.call.Req.Body.(*kmsg.ShareGroupHeartbeatRequest)))
}

// byDuration reads share.auto.offset.reset=by_duration:<ISO-8601
// duration> (Java's Duration.parse form, as the config check accepts:
// PnDTnHnMn.nS).
func byDuration(reset string) (time.Duration, bool) {
	v, ok := strings.CutPrefix(reset, "by_duration:")
	if !ok {
		return 0, false
	}
	v = strings.ToUpper(strings.TrimSpace(v))
	rest, ok := strings.CutPrefix(v, "P")
	if !ok {
		return 0, false
	}
	var d time.Duration
	inTime := false
	for rest != "" {
		if rest[0] == 'T' {
			inTime, rest = true, rest[1:]
			continue
		}
		i := strings.IndexAny(rest, "DHMS")
		if i <= 0 {
			return 0, false
		}
		n, err := strconv.ParseFloat(strings.ReplaceAll(rest[:i], ",", "."), 64)
		if err != nil || n < 0 {
			return 0, false
		}
		unit := map[byte]time.Duration{'D': 24 * time.Hour, 'H': time.Hour, 'M': time.Minute, 'S': time.Second}[rest[i]]
		if (rest[i] == 'D') == inTime {
			return 0, false // days before T, the rest after
		}
		d += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	return d, true
}

// startByTime starts group's share partition k at the first offset whose
// timestamp is at or after ts, as ListOffsets finds it (the latest offset
// when no record is that new). Fetches skip the partition until the
// lookup answers, then are woken.
func (a *coordinatorActor) startByTime(k partKey, ts int64) {
	if a.starting[k] {
		return
	}
	name, _, code := a.resolve(k.tp)
	pid, ok := a.env.Routes.Load().Partition(name, k.tp.Partition)
	if code != kerr.None || !ok {
		return // the next fetch tries again
	}
	if a.starting == nil {
		a.starting = map[partKey]bool{}
	}
	a.starting[k] = true
	out := kmsg.NewListOffsetsResponseTopicPartition()
	self, root := a.self, a.root
	g := gather.New(1, a.env.GatherTimeout, func(_ []int64, timedOut bool) {
		code := kerr.Code(out.ErrorCode)
		if timedOut {
			code = kerr.RequestTimedOut
		}
		root.Send(self, &startFound{k, out.Offset, code})
	})
	a.env.Send(pid, &partition.ListOffsets{Timestamp: ts, CurrentEpoch: -1, Out: &out, Reply: gather.Slot{G: g}})
}

// started creates the share partition a by-time lookup placed, and wakes
// the group's waiting fetches.
func (a *coordinatorActor) started(m *startFound) {
	delete(a.starting, m.k)
	if m.code != kerr.None {
		a.env.Log.Warn("sharegroup: finding a share partition's start by time failed; the next fetch tries again", "group", m.k.group, "partition", m.k.tp.Partition, "err", m.code)
		return
	}
	if a.parts[m.k] != nil {
		return
	}
	_, view, code := a.resolve(m.k.tp)
	hw, logStart, ok := view.Bounds()
	if code != kerr.None || !ok {
		return
	}
	start := m.offset
	if start < 0 {
		start = hw // no record that new: latest
	}
	a.parts[m.k] = NewPartition(max(start, logStart), a.settingsOf(m.k.group).limits)
	a.wakeGroup(m.k.group)
}
