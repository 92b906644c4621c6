// Package config is the broker's registry of configuration keys: every
// broker, topic and group config samsa knows, under Kafka's own names, with
// its type, default, validator, documentation and, for topic and group
// configs, the broker-level synonyms they inherit from.
//
// # What it owns
//
//   - The definitions (defs_broker.go, defs_dynamic.go, defs_topic.go,
//     defs_group.go).
//     Adding a config is adding one Def to one of those tables;
//     DescribeConfigs, validation and `samsa serve` parsing all read from
//     them.
//   - Parsing of Kafka's server.properties format (properties.go) and of
//     SAMSA_* environment variables (env.go).
//   - Broker: the typed, validated static broker configuration that
//     `samsa serve` builds from defaults < file < environment < flags.
//   - Resolution (resolve.go): the effective value of a topic or broker
//     config from its layers, with the source and synonym chain that
//     DescribeConfigs reports.
//
// # Layers and precedence
//
// A topic config value comes from, first match wins:
//
//  1. the topic's own override (DYNAMIC_TOPIC_CONFIG);
//  2. for each broker synonym in order (retention.ms: log.retention.ms,
//     log.retention.minutes, log.retention.hours), the dynamic per-broker
//     value (DYNAMIC_BROKER_CONFIG), the dynamic cluster default
//     (DYNAMIC_DEFAULT_BROKER_CONFIG), the static value from
//     server.properties, env or flags (STATIC_BROKER_CONFIG), then the
//     synonym's own default (DEFAULT_CONFIG);
//  3. the topic definition's default (DEFAULT_CONFIG).
//
// A synonym in a coarser unit is scaled (log.retention.hours=1 gives
// retention.ms=3600000); negative values mean "unlimited" and stay -1.
//
// Broker configs resolve the same way over their own synonyms
// (log.retention.ms ← log.retention.minutes ← log.retention.hours,
// log.dirs ← log.dir).
//
// # Group configs
//
// Kafka 4.1's group configs (consumer.*, share.*, streams.* session
// timeouts, heartbeat intervals, record lock duration, offset reset,
// isolation level, standby replicas) are set per group id, for groups that
// exist or not. Unset, a group config is its broker synonym's effective
// value (group.consumer.session.timeout.ms, ...), reported as
// DEFAULT_CONFIG as Kafka does; set, GROUP_CONFIG. ValidateGroup checks a
// group's values together against the broker's group.*.min/max bounds and
// every session timeout above its heartbeat interval, with Kafka's
// messages. They are stored and described and have no effect yet, as their
// documentation says: KIP-848 consumer groups use the broker's
// group.consumer.* values, and samsa has no share or streams groups.
//
// # Dynamic broker configs
//
// AlterConfigs on the BROKER resource accepts every key Kafka's broker
// accepts at runtime (DynamicBrokerConfig: the log.* topic defaults,
// message.max.bytes, listeners, SSL and SASL keys, the log cleaner, thread
// counts, connection limits, metrics reporters, producer-id expiry, tiered
// storage, replication quotas) and refuses the others as Kafka does
// (dynamic.go): read-only keys ("Cannot update these configs
// dynamically"), SSL keystore keys without a listener prefix, per-broker
// keys as cluster-wide defaults. Listener overrides,
// listener.name.<listener>.<key>, are accepted per broker and resolve over
// the key they override. Def.ActsOnDynamic says whether samsa applies a
// dynamic value: many are stored and reported only (Ignored keys, and the
// Inert ones samsa reads at start only, such as listeners and
// num.network.threads); DescribeConfigs' documentation says so
// (Def.Documentation), and the metadata core reports each such key once
// for the log.
//
// # Threading
//
// Definitions are immutable tables; every function is pure and safe for
// concurrent use. A Broker value is immutable once Load returns.
package config
