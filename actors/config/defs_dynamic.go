package config

import "slices"

// kafkaDynamicDefs are the broker configs Kafka lets AlterConfigs change at
// runtime (DynamicBrokerConfig.AllDynamicConfigs, 3.9 and 4.x, and the
// broker quota configs) that samsa has no other use for yet: principals,
// SASL, the log cleaner, threads, metrics reporters, tiered storage and
// the log-dir move quota. All are Ignored: accepted from server.properties
// and stored when set dynamically, reported by DescribeConfigs, and
// without effect. The dynamic keys samsa does act on (the log.* topic
// defaults, message.max.bytes, ...) live in brokerDefs, and the
// replication quotas and producer-state keys below.
//
// Listener, security and SASL keys are PerBroker: Kafka refuses them as
// cluster-wide defaults.
var kafkaDynamicDefs = append(dynamicIgnored([]Def{
	// Principals (the ssl.* keys are in defs_ssl.go).
	{Name: "principal.builder.class", Type: Class, Default: "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder", PerBroker: true, Doc: securityDoc},

	// SASL, per broker.
	{Name: "sasl.kerberos.service.name", Type: String, Nullable: true, PerBroker: true, Doc: saslDoc},
	{Name: "sasl.kerberos.kinit.cmd", Type: String, Default: "/usr/bin/kinit", PerBroker: true, Doc: saslDoc},
	{Name: "sasl.kerberos.ticket.renew.window.factor", Type: Double, Default: "0.8", PerBroker: true, Doc: saslDoc},
	{Name: "sasl.kerberos.ticket.renew.jitter", Type: Double, Default: "0.05", PerBroker: true, Doc: saslDoc},
	{Name: "sasl.kerberos.min.time.before.relogin", Type: Long, Default: "60000", PerBroker: true, Doc: saslDoc},
	{Name: "sasl.kerberos.principal.to.local.rules", Type: List, Default: "DEFAULT", PerBroker: true, Doc: saslDoc},
	{Name: "sasl.login.refresh.window.factor", Type: Double, Default: "0.8", Check: FractionBetween(0.5, 1), PerBroker: true, Doc: saslDoc},
	{Name: "sasl.login.refresh.window.jitter", Type: Double, Default: "0.05", Check: FractionBetween(0, 0.25), PerBroker: true, Doc: saslDoc},
	{Name: "sasl.login.refresh.min.period.seconds", Type: Short, Default: "60", Check: Between(0, 900), PerBroker: true, Doc: saslDoc},
	{Name: "sasl.login.refresh.buffer.seconds", Type: Short, Default: "300", Check: Between(0, 3600), PerBroker: true, Doc: saslDoc},

	// Log cleaner: the keys the cleaner reads are in brokerDefs.
	{Name: "log.cleaner.io.buffer.size", Type: Int, Default: "524288", Check: AtLeast(0), Doc: cleanerDoc},

	// Topic defaults samsa's topics do not have.
	{Name: "compression.gzip.level", Type: Int, Default: "-1", Check: oneOrRange(-1, 1, 9), Doc: "Accepted; samsa does not recompress batches, so compression levels have no use yet."},
	{Name: "compression.lz4.level", Type: Int, Default: "9", Check: Between(1, 17), Doc: "Accepted; samsa does not recompress batches, so compression levels have no use yet."},
	{Name: "compression.zstd.level", Type: Int, Default: "3", Check: Between(-131072, 22), Doc: "Accepted; samsa does not recompress batches, so compression levels have no use yet."},
	{Name: "log.message.timestamp.difference.max.ms", Type: Long, Default: longMax, Check: AtLeast(0), Doc: "Kafka 3.x's limit on batch timestamps, replaced by log.message.timestamp.before.max.ms and .after.max.ms, which samsa applies."},
	{Name: "log.message.downconversion.enable", Type: Boolean, Default: "true", Doc: "Accepted; samsa serves only message format v2 and never down-converts."},
	{Name: "log.local.retention.ms", Type: Long, Default: "-2", Check: AtLeast(-2), Doc: tieredDoc},
	{Name: "log.local.retention.bytes", Type: Long, Default: "-2", Check: AtLeast(-2), Doc: tieredDoc},

	// Threads, metrics, producer state.
	{Name: "num.replica.fetchers", Type: Int, Default: "1", Doc: "Accepted; replication comes with cluster mode."},
	{Name: "metric.reporters", Type: List, Default: "", Doc: "Accepted; samsa serves its metrics on /metrics and runs no Java reporters."},

	// Tiered storage.
	{Name: "remote.log.index.file.cache.total.size.bytes", Type: Long, Default: "1073741824", Check: AtLeast(1), Doc: tieredDoc},
	{Name: "remote.fetch.max.wait.ms", Type: Int, Default: "500", Check: AtLeast(1), Doc: tieredDoc},
	{Name: "remote.log.manager.copy.max.bytes.per.second", Type: Long, Default: longMax, Check: AtLeast(1), Doc: tieredDoc},
	{Name: "remote.log.manager.fetch.max.bytes.per.second", Type: Long, Default: longMax, Check: AtLeast(1), Doc: tieredDoc},
	{Name: "remote.list.offsets.request.timeout.ms", Type: Long, Default: "30000", Check: AtLeast(1), Doc: tieredDoc},

	// Replication quotas (Kafka's broker quota configs, dynamic only).
	{Name: "replica.alter.log.dirs.io.max.bytes.per.second", Type: Long, Default: longMax, Check: AtLeast(0), Doc: quotaDoc},
}), slices.Concat(sslDefs, replicationQuotaDefs, producerStateDefs)...)

// producerStateDefs are Kafka's dynamic producer-state keys, which the
// partitions read at each use.
var producerStateDefs = []Def{
	{Name: "producer.id.expiration.ms", Type: Int, Default: "86400000", Check: AtLeast(1), Dynamic: true,
		Doc: "A producer id that has written nothing to a partition for this long, and has no transaction open there, is forgotten by that partition (looked for at each log.retention.check.interval.ms); its next batch is accepted at any sequence."},
	{Name: "transaction.partition.verification.enable", Type: Boolean, Default: "true", Dynamic: true,
		Doc: "KIP-890: before a transactional batch opens its producer's transaction on a partition, the leader asks the transaction coordinator whether the partition is in it, so a late batch cannot open a transaction no coordinator will end."},
}

// replicationQuotaDefs are the replication throttles, which samsa applies
// in cluster mode (actors/replica's Throttle); Kafka has them dynamic
// only (/config/brokers/<id> or <default>).
var replicationQuotaDefs = []Def{
	{Name: "leader.replication.throttled.rate", Type: Long, Default: longMax, Check: AtLeast(0), Dynamic: true,
		Doc: "Bytes/s the leaders here send to followers out of the ISR of the replicas leader.replication.throttled.replicas names (cluster mode)."},
	{Name: "follower.replication.throttled.rate", Type: Long, Default: longMax, Check: AtLeast(0), Dynamic: true,
		Doc: "Bytes/s the followers here fetch, while out of the ISR, for the replicas follower.replication.throttled.replicas names (cluster mode)."},
}

const (
	saslDoc     = "Accepted without effect: samsa authenticates with PLAIN, SCRAM and OAUTHBEARER (sasl.enabled.mechanisms), not Kerberos, and validates OAUTHBEARER tokens itself (sasl.oauthbearer.*)."
	securityDoc = "Accepted; authentication and ACLs come later."
	cleanerDoc  = "Accepted; the cleaner sizes its own read buffers."
	tieredDoc   = "Accepted; samsa has no tiered storage."
	quotaDoc    = "Accepted; samsa does not move replicas between log directories."
)

// dynamicIgnored marks defs Dynamic and Ignored (ListenerOnly ones
// PerBroker too: a listener is one broker's).
func dynamicIgnored(defs []Def) []Def {
	for i := range defs {
		defs[i].Dynamic, defs[i].Ignored = true, true
		defs[i].PerBroker = defs[i].PerBroker || defs[i].ListenerOnly
	}
	return defs
}

// oneOrRange accepts the value one or integers in [lo, hi].
func oneOrRange(one, lo, hi int64) func(string) error {
	between := Between(lo, hi)
	return func(v string) error {
		if ParseInt(v) == one {
			return nil
		}
		return between(v)
	}
}
