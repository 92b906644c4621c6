package group

import (
	"crypto/rand"
	"time"
)

// Config is the coordinator's configuration. Names follow Kafka's broker
// settings; the zero value of a field means "Kafka's default" (see
// withDefaults), except where noted.
type Config struct {
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms (3000):
	// how long the first rebalance of an empty group waits for more
	// members; each new member extends it by this much again, up to the
	// rebalance timeout. Negative means no delay.
	InitialRebalanceDelay time.Duration
	// MinSessionTimeout and MaxSessionTimeout are
	// group.min.session.timeout.ms (6000) and group.max.session.timeout.ms
	// (1800000): the range a JoinGroup's session timeout must fall in.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// MaxSize is group.max.size; 0 means unlimited (Kafka's default,
	// Integer.MAX_VALUE).
	MaxSize int
	// OffsetMetadataMaxBytes is offset.metadata.max.bytes (4096).
	OffsetMetadataMaxBytes int
	// OffsetsRetention is offsets.retention.minutes (10080 = 7 days).
	OffsetsRetention time.Duration
	// NewMemberJoinTimeout bounds how long a brand-new member's first
	// JoinGroup may stay parked (Kafka's fixed 5 minutes): a client that
	// gave up and retried would otherwise leave a defunct member behind.
	NewMemberJoinTimeout time.Duration
	// ConsumerSessionTimeout is group.consumer.session.timeout.ms
	// (45000): a KIP-848 member that sends no heartbeat for this long
	// is fenced.
	ConsumerSessionTimeout time.Duration
	// ConsumerHeartbeatInterval is group.consumer.heartbeat.interval.ms
	// (5000), told to KIP-848 members in every heartbeat answer.
	ConsumerHeartbeatInterval time.Duration
	// ConsumerAssignors is group.consumer.assignors (uniform, range): the
	// server assignors members may name; the first is the default.
	ConsumerAssignors []string
	// ConsumerMaxSize is group.consumer.max.size; 0 means unlimited.
	ConsumerMaxSize int
	// ConsumerMigrationPolicy is group.consumer.migration.policy
	// (MigrationBidirectional): whether a classic group with members may
	// become a consumer group when a consumer protocol member joins
	// (upgrade), and a consumer group whose last consumer protocol
	// member leaves a classic one (downgrade).
	ConsumerMigrationPolicy string
	// NewUUID returns 16 random bytes for member ids. Tests inject a
	// deterministic source; nil means crypto/rand.
	NewUUID func() [16]byte
}

// Kafka's defaults.
const (
	DefaultInitialRebalanceDelay  = 3 * time.Second
	DefaultMinSessionTimeout      = 6 * time.Second
	DefaultMaxSessionTimeout      = 30 * time.Minute
	DefaultOffsetMetadataMaxBytes = 4096
	DefaultOffsetsRetention       = 7 * 24 * time.Hour
	DefaultNewMemberJoinTimeout   = 5 * time.Minute

	DefaultConsumerSessionTimeout    = 45 * time.Second
	DefaultConsumerHeartbeatInterval = 5 * time.Second
)

// The values of group.consumer.migration.policy (Kafka's
// ConsumerGroupMigrationPolicy).
const (
	MigrationDisabled      = "disabled"
	MigrationUpgrade       = "upgrade"
	MigrationDowngrade     = "downgrade"
	MigrationBidirectional = "bidirectional"
)

// upgradeEnabled reports whether a classic group with members may turn
// into a consumer group.
func (c *Config) upgradeEnabled() bool {
	return c.ConsumerMigrationPolicy == MigrationUpgrade || c.ConsumerMigrationPolicy == MigrationBidirectional
}

// downgradeEnabled reports whether a consumer group left with classic
// members only may turn back into a classic group.
func (c *Config) downgradeEnabled() bool {
	return c.ConsumerMigrationPolicy == MigrationDowngrade || c.ConsumerMigrationPolicy == MigrationBidirectional
}

func (c Config) withDefaults() Config {
	if c.InitialRebalanceDelay == 0 {
		c.InitialRebalanceDelay = DefaultInitialRebalanceDelay
	}
	if c.MinSessionTimeout == 0 {
		c.MinSessionTimeout = DefaultMinSessionTimeout
	}
	if c.MaxSessionTimeout == 0 {
		c.MaxSessionTimeout = DefaultMaxSessionTimeout
	}
	if c.OffsetMetadataMaxBytes == 0 {
		c.OffsetMetadataMaxBytes = DefaultOffsetMetadataMaxBytes
	}
	if c.OffsetsRetention == 0 {
		c.OffsetsRetention = DefaultOffsetsRetention
	}
	if c.NewMemberJoinTimeout == 0 {
		c.NewMemberJoinTimeout = DefaultNewMemberJoinTimeout
	}
	if c.ConsumerSessionTimeout == 0 {
		c.ConsumerSessionTimeout = DefaultConsumerSessionTimeout
	}
	if c.ConsumerHeartbeatInterval == 0 {
		c.ConsumerHeartbeatInterval = DefaultConsumerHeartbeatInterval
	}
	if c.ConsumerMigrationPolicy == "" {
		c.ConsumerMigrationPolicy = MigrationBidirectional
	}
	if len(c.ConsumerAssignors) == 0 {
		c.ConsumerAssignors = []string{AssignorUniform, AssignorRange}
	}
	if c.NewUUID == nil {
		c.NewUUID = func() (u [16]byte) {
			rand.Read(u[:])
			return u
		}
	}
	return c
}

// formatUUID renders 16 bytes as a version-4 UUID string, the form Java's
// UUID.randomUUID().toString() gives and Kafka puts in member ids.
func formatUUID(u [16]byte) string {
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[b>>4], hex[b&0xf])
	}
	return string(out)
}

// initialDelay is the initial rebalance delay, 0 when disabled.
func (c *Config) initialDelay() time.Duration { return max(c.InitialRebalanceDelay, 0) }
