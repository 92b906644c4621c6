package replica

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Replication throttles, as Kafka's ReplicationQuotaManager: a rate in
// bytes per second for one side of replication on this broker
// (leader.replication.throttled.rate for what its leaders send,
// follower.replication.throttled.rate for what its followers fetch,
// dynamic broker configs in /config/brokers/<id> or <default>), applied
// to the partitions a topic config names for this broker
// (leader.replication.throttled.replicas and
// follower.replication.throttled.replicas: "partition:broker,..." or "*"
// for all). Kafka throttles a replica only while it is out of the ISR,
// so a throttle slows catching up (a reassignment's new replicas, a
// restarted broker) but never pushes an in-sync follower out.
//
// Kafka measures the rate over replication.quota.window.num windows of
// one second; this is a token bucket of one second's worth of bytes:
// exceeded once the bytes recorded outrun the rate, until time pays them
// back. A fetch is never cut short (a batch goes whole, as in Kafka);
// the next one waits.

// Throttle is one side's quota on this broker.
type Throttle struct {
	leader bool // which topic config names the partitions
	broker int32
	now    func() time.Time

	// active is rate != 0, read without the lock: every replica fetch
	// asks, and almost always no throttle is set.
	active atomic.Bool

	mu         sync.Mutex
	rates      [2]string // the rate config: this broker's, the cluster default's
	rate       float64   // bytes/s; 0 = none
	tokens     float64
	last       time.Time
	partitions map[string]throttledSet
}

type throttledSet struct {
	all   bool
	parts map[int32]bool
}

// NewThrottle makes broker's leader-side (leader) or follower-side quota,
// unlimited until configured; now is the clock (time.Now if nil).
func NewThrottle(leader bool, broker int32, now func() time.Time) *Throttle {
	if now == nil {
		now = time.Now
	}
	return &Throttle{leader: leader, broker: broker, now: now, partitions: map[string]throttledSet{}}
}

func (t *Throttle) rateKey() string {
	if t.leader {
		return "leader.replication.throttled.rate"
	}
	return "follower.replication.throttled.rate"
}

func (t *Throttle) replicasKey() string {
	if t.leader {
		return "leader.replication.throttled.replicas"
	}
	return "follower.replication.throttled.replicas"
}

// BrokerConfigs takes this broker's dynamic configs (clusterDefault:
// the cluster-wide default ones) as just read from ZooKeeper. This
// broker's own value wins over the default's.
func (t *Throttle) BrokerConfigs(clusterDefault bool, configs map[string]string) {
	i := 0
	if clusterDefault {
		i = 1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rates[i] = strings.TrimSpace(configs[t.rateKey()])
	v := t.rates[0]
	if v == "" {
		v = t.rates[1]
	}
	rate, err := strconv.ParseInt(v, 10, 64)
	if err != nil || rate <= 0 || rate == math.MaxInt64 {
		rate = 0 // Kafka's default, Long.MaxValue: no throttle
	}
	if float64(rate) != t.rate {
		t.rate, t.tokens, t.last = float64(rate), float64(rate), t.now()
	}
	t.active.Store(rate != 0)
}

// TopicConfigs takes a topic's configs as just read (nil: the topic is
// gone).
func (t *Throttle) TopicConfigs(topic string, configs map[string]string) {
	set := parseThrottled(configs[t.replicasKey()], t.broker)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !set.all && len(set.parts) == 0 {
		delete(t.partitions, topic)
		return
	}
	t.partitions[topic] = set
}

// parseThrottled is Kafka's parseThrottledPartitions: the partitions of
// "p:b,..." whose broker b is this one, or all of them for "*".
func parseThrottled(v string, broker int32) throttledSet {
	v = strings.TrimSpace(v)
	if v == "*" {
		return throttledSet{all: true}
	}
	set := throttledSet{parts: map[int32]bool{}}
	for _, item := range strings.Split(v, ",") {
		p, b, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			continue
		}
		pn, err1 := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		bn, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
		if err1 == nil && err2 == nil && int32(bn) == broker {
			set.parts[int32(pn)] = true
		}
	}
	return set
}

// Throttled reports whether topic/partition is under this quota here
// (Kafka's isThrottled); false for a nil Throttle.
func (t *Throttle) Throttled(topic string, partition int32) bool {
	if t == nil || !t.active.Load() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rate == 0 {
		return false
	}
	s, ok := t.partitions[topic]
	return ok && (s.all || s.parts[partition])
}

// Exceeded reports whether the bytes recorded outran the rate (Kafka's
// isQuotaExceeded).
func (t *Throttle) Exceeded() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rate == 0 {
		return false
	}
	t.refill()
	return t.tokens <= 0
}

// Record counts n bytes of throttled replication (Kafka's record).
func (t *Throttle) Record(n int) {
	if t == nil || n <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rate == 0 {
		return
	}
	t.refill()
	t.tokens -= float64(n)
}

// refill pays back the time since the last look, up to one second's
// worth (the burst a quiet second allows).
func (t *Throttle) refill() {
	now := t.now()
	if dt := now.Sub(t.last).Seconds(); dt > 0 {
		t.tokens = math.Min(t.rate, t.tokens+dt*t.rate)
	}
	t.last = now
}

// Hold reports whether a replica out of the ISR (inSync false) of
// topic/partition waits: Kafka's shouldLeaderThrottle and
// shouldFollowerThrottle.
func (t *Throttle) Hold(topic string, partition int32, inSync bool) bool {
	return !inSync && t.Throttled(topic, partition) && t.Exceeded()
}

// Throttles are both sides of this broker's replication quotas; the
// metadata actor hands them every config it reads from ZooKeeper.
type Throttles struct {
	Leader, Follower *Throttle
}

// NewThrottles makes broker's two quotas, unlimited until configured.
func NewThrottles(broker int32) *Throttles {
	return &Throttles{Leader: NewThrottle(true, broker, nil), Follower: NewThrottle(false, broker, nil)}
}

// BrokerConfigs hands both quotas this broker's dynamic configs.
func (ts *Throttles) BrokerConfigs(clusterDefault bool, configs map[string]string) {
	ts.Leader.BrokerConfigs(clusterDefault, configs)
	ts.Follower.BrokerConfigs(clusterDefault, configs)
}

// TopicConfigs hands both quotas a topic's configs.
func (ts *Throttles) TopicConfigs(topic string, configs map[string]string) {
	ts.Leader.TopicConfigs(topic, configs)
	ts.Follower.TopicConfigs(topic, configs)
}

// holdBack is the fetcher's check: a followed partition out of the ISR
// under an exceeded follower quota is left out of the next fetch.
func (fs *Fetchers) holdBack(p Followed) bool {
	return fs.cfg.Throttle.Hold(p.Topic, p.Partition, p.InSync)
}

// fetched counts what a fetch brought a throttled partition.
func (fs *Fetchers) fetched(p Followed, n int) {
	if fs.cfg.Throttle.Throttled(p.Topic, p.Partition) {
		fs.cfg.Throttle.Record(n)
	}
}
