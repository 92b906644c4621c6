package config

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Broker config keys that the broker's wiring reads by name.
const (
	KeyBrokerID            = "broker.id"
	KeyNodeID              = "node.id"
	KeyListeners           = "listeners"
	KeyAdvertisedListeners = "advertised.listeners"
	KeySecurityProtocolMap = "listener.security.protocol.map"
	KeyControllerListeners = "controller.listener.names"
	KeyLogDirs             = "log.dirs"
	KeyLogDir              = "log.dir"
	KeyZooKeeperConnect    = "zookeeper.connect"
	KeyNumPartitions       = "num.partitions"
	KeyReplicationFactor   = "default.replication.factor"
	KeyAutoCreateTopics    = "auto.create.topics.enable"
	KeyDeleteTopicEnable   = "delete.topic.enable"
	KeyMessageMaxBytes     = "message.max.bytes"
	KeyRequestMaxBytes     = "socket.request.max.bytes"
	KeyConnectionsMaxIdle  = "connections.max.idle.ms"
	KeyMaxConnections      = "max.connections"
	KeyMaxConnectionsPerIP = "max.connections.per.ip"
	KeyNetworkThreads      = "num.network.threads"
	KeyRack                = "broker.rack"
	KeyShutdownTimeout     = "samsa.shutdown.timeout.ms"
	KeyTransactionsEnable  = "samsa.transactions.enable"
	KeyHTTPListeners       = "samsa.http.listeners"

	KeyZooKeeperConnectionTimeout   = "zookeeper.connection.timeout.ms"
	KeyZooKeeperSessionTimeout      = "zookeeper.session.timeout.ms"
	KeyZooKeeperSetACL              = "zookeeper.set.acl"
	KeyInterBrokerListener          = "inter.broker.listener.name"
	KeyInterBrokerProtocol          = "security.inter.broker.protocol"
	KeyBrokerIDGeneration           = "broker.id.generation.enable"
	KeyReservedBrokerMaxID          = "reserved.broker.max.id"
	KeyControlledShutdown           = "controlled.shutdown.enable"
	KeyControlledShutdownMaxRetries = "controlled.shutdown.max.retries"
	KeyControlledShutdownBackoff    = "controlled.shutdown.retry.backoff.ms"
	KeyOffsetsReplicationFactor     = "offsets.topic.replication.factor"
	KeyUncleanLeaderElection        = "unclean.leader.election.enable"
	KeyReplicaLagTimeMax            = "replica.lag.time.max.ms"
	KeyReplicaFetchWaitMax          = "replica.fetch.wait.max.ms"
	KeyReplicaFetchMinBytes         = "replica.fetch.min.bytes"
	KeyReplicaFetchMaxBytes         = "replica.fetch.max.bytes"
	KeyReplicaFetchResponseMaxBytes = "replica.fetch.response.max.bytes"
	KeyReplicaFetchBackoff          = "replica.fetch.backoff.ms"
	KeyAutoLeaderRebalance          = "auto.leader.rebalance.enable"
	KeyLeaderImbalanceCheckInterval = "leader.imbalance.check.interval.seconds"
	KeyLeaderImbalancePerBroker     = "leader.imbalance.per.broker.percentage"
	KeyReplicaHWCheckpointInterval  = "replica.high.watermark.checkpoint.interval.ms"
	KeyReplicaSelectorClass         = "replica.selector.class"
)

// RackAwareReplicaSelector is the one replica.selector.class samsa
// implements (KIP-392): consumers are pointed at an in-sync replica in
// their rack.
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

var errEmpty = errors.New("must not be empty")

func notEmpty(v string) error {
	if strings.TrimSpace(v) == "" {
		return errEmpty
	}
	return nil
}

// httpListeners accepts HOST:PORT addresses (an empty host binds every
// interface), the form samsa.http.listeners takes.
func httpListeners(v string) error {
	for _, a := range ParseList(v) {
		if _, port, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("%q is not HOST:PORT: %w", a, err)
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("%q: the port must be a number from 0 to 65535", a)
		}
	}
	return nil
}

// brokerDefs are the broker configs samsa knows. Keys marked Ignored are
// accepted so that a Kafka server.properties loads unchanged, and have no
// effect yet; every other key is acted on.
var brokerDefs = []Def{
	// Identity and listeners.
	{Name: KeyBrokerID, Type: Int, Default: "0", Check: AtLeast(0),
		Synonyms: []Synonym{{Name: KeyNodeID}},
		Doc:      "This broker's id. samsa defaults to 0 (Kafka's -1 auto-generation is not supported)."},
	{Name: KeyNodeID, Type: Int, Nullable: true, Check: AtLeast(0),
		Doc: "KRaft's name for the broker id; read when broker.id is not set."},
	{Name: KeyRack, Type: String, Nullable: true, Doc: "Rack of this broker, reported in Metadata."},
	{Name: KeyListeners, Type: List, Default: "PLAINTEXT://127.0.0.1:9092", Check: notEmpty, Dynamic: true, Inert: true, PerBroker: true,
		Doc: "Comma list of NAME://host:port to listen on. PLAINTEXT and SSL listeners are served (SSL ones with the ssl.* keys, overridable per listener as listener.name.<listener>.ssl.*); port 0 picks a free port."},
	{Name: KeyAdvertisedListeners, Type: List, Nullable: true, Dynamic: true, Inert: true, PerBroker: true,
		Doc: "NAME://host:port that clients are told to connect to; defaults to the listeners (with the bound port)."},
	{Name: KeySecurityProtocolMap, Type: String, Dynamic: true, Inert: true, PerBroker: true,
		Default: "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
		Doc:     "Maps listener names to security protocols."},
	{Name: KeyControllerListeners, Type: List, Nullable: true,
		Doc: "KRaft controller listener names: such listeners are skipped (samsa has no KRaft controller)."},
	{Name: KeyInterBrokerListener, Type: String, Nullable: true,
		Doc: "Cluster mode: the listener other brokers and the controller talk to this broker on. Defaults to the listener whose security protocol is security.inter.broker.protocol."},
	{Name: KeyInterBrokerProtocol, Type: String, Default: "PLAINTEXT", Check: OneOf("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
		Doc: "Cluster mode: the security protocol of the inter-broker listener, when inter.broker.listener.name is not set. An SSL or SASL_SSL one is dialled with its own ssl.* settings, a SASL one logs in with sasl.mechanism.inter.broker.protocol."},
	{Name: "process.roles", Type: List, Nullable: true, Ignored: true, Doc: "KRaft roles; samsa is always a broker."},
	{Name: "controller.quorum.voters", Type: List, Nullable: true, Ignored: true, Doc: "KRaft only; ignored."},
	{Name: "controller.quorum.bootstrap.servers", Type: List, Nullable: true, Ignored: true, Doc: "KRaft only; ignored."},

	// Storage.
	{Name: KeyLogDirs, Type: List, Nullable: true,
		Synonyms: []Synonym{{Name: KeyLogDir}},
		Doc:      "Comma list of data directories; partitions are spread over them."},
	{Name: KeyLogDir, Type: String, Default: "./data", Check: notEmpty,
		Doc: "The data directory when log.dirs is not set."},
	{Name: "num.recovery.threads.per.data.dir", Type: Int, Default: "1", Check: AtLeast(1), Ignored: true, Dynamic: true,
		Doc: "Accepted; each partition recovers in its own actor."},

	// ZooKeeper.
	{Name: KeyZooKeeperConnect, Type: String, Nullable: true,
		Doc: "ZooKeeper connection string (host:port,host:port/chroot): set, the broker joins the cluster registered there, in Apache Kafka 3.9's layout; empty, it runs alone with its metadata in its data directory."},
	{Name: KeyZooKeeperConnectionTimeout, Type: Int, Nullable: true, Check: AtLeast(1),
		Doc: "How long the broker waits for its first ZooKeeper session at start before it gives up; defaults to zookeeper.session.timeout.ms."},
	{Name: KeyZooKeeperSessionTimeout, Type: Int, Default: "18000", Check: AtLeast(1),
		Doc: "ZooKeeper session timeout: a broker whose session expires is taken for dead by the controller (its ephemeral registration goes)."},
	{Name: KeyZooKeeperSetACL, Type: Boolean, Default: "false",
		Doc: "Write ZooKeeper ACLs on the znodes samsa creates. Not supported: samsa refuses to start when it is true (it needs SASL to ZooKeeper)."},
	{Name: "zookeeper.max.in.flight.requests", Type: Int, Default: "10", Check: AtLeast(1), Ignored: true,
		Doc: "Accepted; the ZooKeeper client pipelines as it sees fit."},
	{Name: KeyBrokerIDGeneration, Type: Boolean, Default: "true",
		Doc: "Cluster mode: a broker with no broker.id (and none in its data directory) takes one from ZooKeeper's /brokers/seqid, above reserved.broker.max.id."},
	{Name: KeyReservedBrokerMaxID, Type: Int, Default: "1000", Check: AtLeast(0),
		Doc: "Highest broker.id an operator may set; generated ids start above it."},
	{Name: KeyControlledShutdownMaxRetries, Type: Int, Default: "3", Check: AtLeast(0),
		Doc: "Cluster mode: how many times a stopping broker asks the controller to move its leaderships away before it stops anyway."},
	{Name: KeyControlledShutdownBackoff, Type: Long, Default: "5000", Check: AtLeast(0),
		Doc: "Cluster mode: the pause between controlled shutdown attempts."},

	// Topics.
	{Name: KeyNumPartitions, Type: Int, Default: "1", Check: AtLeast(1), Dynamic: true,
		Doc: "Partitions of auto-created topics and of CreateTopics requests that leave the count to the broker."},
	{Name: KeyReplicationFactor, Type: Int, Default: "1", Check: AtLeast(1), Dynamic: true,
		Doc: "Replication factor of auto-created topics and of requests that leave it to the broker."},
	{Name: "min.insync.replicas", Type: Int, Default: "1", Check: AtLeast(1), Dynamic: true,
		Doc: "With acks=all: replicas that must have a write before it is acknowledged."},
	{Name: KeyAutoCreateTopics, Type: Boolean, Default: "true",
		Doc: "Create a topic when a client asks Metadata for it and allows auto-creation."},
	{Name: KeyDeleteTopicEnable, Type: Boolean, Default: "true", Doc: "Allow DeleteTopics."},
	{Name: KeyUncleanLeaderElection, Type: Boolean, Default: "false", Dynamic: true,
		Doc: "Allow an out-of-sync replica to become leader (cluster mode)."},
	{Name: "compression.type", Type: String, Default: "producer", Dynamic: true,
		Check: OneOf("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
		Doc:   "Default codec of stored batches."},
	{Name: KeyMessageMaxBytes, Type: Int, Default: "1048588", Check: AtLeast(0), Dynamic: true,
		Doc: "Largest record batch accepted, unless a topic's max.message.bytes says otherwise."},

	// Log retention and rolling.
	{Name: "log.retention.ms", Type: Long, Nullable: true, Check: AtLeast(-1), Dynamic: true,
		Synonyms: []Synonym{{Name: "log.retention.minutes", Scale: msMin}, {Name: "log.retention.hours", Scale: msHour}},
		Doc:      "Default retention time; -1: forever."},
	{Name: "log.retention.minutes", Type: Int, Nullable: true, Doc: "Default retention in minutes, when log.retention.ms is not set."},
	{Name: "log.retention.hours", Type: Int, Default: "168", Doc: "Default retention in hours, when neither log.retention.ms nor .minutes is set."},
	{Name: "log.retention.bytes", Type: Long, Default: "-1", Dynamic: true, Doc: "Default partition size limit; -1: none."},
	{Name: "log.retention.check.interval.ms", Type: Long, Default: "300000", Check: AtLeast(1),
		Doc: "How often retention is enforced."},
	{Name: "log.segment.bytes", Type: Int, Default: "1073741824", Check: AtLeast(14), Dynamic: true,
		Doc: "Default segment size."},
	{Name: "log.roll.ms", Type: Long, Nullable: true, Check: AtLeast(1), Dynamic: true,
		Synonyms: []Synonym{{Name: "log.roll.hours", Scale: msHour}},
		Doc:      "Default age at which a segment is rolled."},
	{Name: "log.roll.hours", Type: Int, Default: "168", Check: AtLeast(1), Doc: "log.roll.ms in hours."},
	{Name: "log.roll.jitter.ms", Type: Long, Nullable: true, Check: AtLeast(0), Dynamic: true,
		Synonyms: []Synonym{{Name: "log.roll.jitter.hours", Scale: msHour}},
		Doc:      "Default segment roll jitter."},
	{Name: "log.roll.jitter.hours", Type: Int, Default: "0", Check: AtLeast(0), Doc: "log.roll.jitter.ms in hours."},
	{Name: "log.cleanup.policy", Type: List, Default: "delete", Check: ListOf(true, "delete", "compact"), Dynamic: true,
		Doc: "Default cleanup policy."},
	{Name: "log.index.interval.bytes", Type: Int, Default: "4096", Check: AtLeast(0), Dynamic: true,
		Doc: "Default bytes between offset index entries."},
	{Name: "log.index.size.max.bytes", Type: Int, Default: "10485760", Check: AtLeast(4), Dynamic: true,
		Doc: "Default index size limit."},
	{Name: "log.segment.delete.delay.ms", Type: Long, Default: "60000", Check: AtLeast(0), Dynamic: true,
		Doc: "Default delay before deleted segment files are removed."},
	{Name: "log.preallocate", Type: Boolean, Default: "false", Dynamic: true, Doc: "Default preallocate of topics (accepted; samsa reserves disk space ahead of active segments either way)."},
	{Name: "log.message.timestamp.type", Type: String, Default: "CreateTime", Check: OneOf("CreateTime", "LogAppendTime"), Dynamic: true,
		Doc: "Default timestamp type."},
	{Name: "log.message.timestamp.before.max.ms", Type: Long, Default: longMax, Check: AtLeast(0), Dynamic: true,
		Doc: "Default limit on past batch timestamps."},
	{Name: "log.message.timestamp.after.max.ms", Type: Long, Default: "3600000", Check: AtLeast(0), Dynamic: true,
		Doc: "Default limit on future batch timestamps."},

	// Flushing and durability.
	{Name: "samsa.log.flush.policy", Type: String, Default: FlushGroup, Dynamic: true,
		Check: OneOf(FlushAlways, FlushGroup, FlushInterval, FlushNever),
		Doc:   "Default samsa.flush.policy of topics: always, group (default), interval or never."},
	{Name: "log.flush.interval.messages", Type: Long, Default: longMax, Check: AtLeast(1), Dynamic: true,
		Doc: "With the interval flush policy: fsync after this many messages."},
	{Name: "log.flush.interval.ms", Type: Long, Nullable: true, Check: AtLeast(0), Dynamic: true,
		Synonyms: []Synonym{{Name: "log.flush.scheduler.interval.ms"}},
		Doc:      "With the interval flush policy: fsync at least this often."},
	{Name: "log.flush.scheduler.interval.ms", Type: Long, Default: longMax, Check: AtLeast(0),
		Doc: "log.flush.interval.ms when that is not set."},
	{Name: KeyTransactionsEnable, Type: Boolean, Default: "true",
		Doc: "Serve Kafka transactions (transaction coordinators on __transaction_state, markers, the last stable offset, read_committed). false turns them off: transactional producers are then refused at once with TRANSACTIONAL_ID_AUTHORIZATION_FAILED and transactional batches are rejected."},
	{Name: "samsa.log.reserve.bytes", Type: Long, Default: "1048576", Check: AtLeast(0),
		Doc: "Disk space reserved ahead of each active segment's end, in steps of this many bytes (fallocate with KEEP_SIZE: the file's size does not change; a roll or a clean shutdown gives back the unused part). Saves the filesystem's block allocation on every append. 0 disables."},
	{Name: "log.flush.offset.checkpoint.interval.ms", Type: Int, Default: "60000", Check: AtLeast(0),
		Doc: "How often each data directory writes its recovery-point and log-start-offset checkpoints; 0: only at shutdown."},

	// Log cleaner (actors/cleaner).
	{Name: "log.cleaner.enable", Type: Boolean, Default: "true", Doc: "Run the log cleaner, which compacts cleanup.policy=compact topics (and __consumer_offsets, __transaction_state); off, they only grow."},
	{Name: "log.cleaner.threads", Type: Int, Default: "1", Check: AtLeast(0), Dynamic: true, Inert: true, Doc: "Cleaner threads: logs cleaned at the same time."},
	{Name: "log.cleaner.dedupe.buffer.size", Type: Long, Default: "134217728", Dynamic: true, Inert: true,
		Doc: "Memory of the cleaners' offset maps (24 bytes per key), shared among log.cleaner.threads."},
	{Name: "log.cleaner.io.buffer.load.factor", Type: Double, Default: "0.9", Dynamic: true, Inert: true, Doc: "How full a cleaner's offset map may get."},
	{Name: "log.cleaner.io.max.bytes.per.second", Type: Double, Default: "1.7976931348623157E308", Dynamic: true, Inert: true,
		Doc: "Bytes per second the cleaners read and write together, at most."},
	{Name: "log.cleaner.backoff.ms", Type: Long, Default: "15000", Check: AtLeast(0), Dynamic: true, Inert: true,
		Doc: "How long the cleaners sleep when no log needs cleaning."},
	{Name: "log.cleaner.delete.retention.ms", Type: Long, Default: "86400000", Check: AtLeast(0), Dynamic: true,
		Doc: "Default tombstone retention."},
	{Name: "log.cleaner.min.cleanable.ratio", Type: Double, Default: "0.5", Check: FractionBetween(0, 1), Dynamic: true,
		Doc: "Default min.cleanable.dirty.ratio."},
	{Name: "log.cleaner.min.compaction.lag.ms", Type: Long, Default: "0", Check: AtLeast(0), Dynamic: true,
		Doc: "Default min.compaction.lag.ms."},
	{Name: "log.cleaner.max.compaction.lag.ms", Type: Long, Default: longMax, Check: AtLeast(1), Dynamic: true,
		Doc: "Default max.compaction.lag.ms."},

	// Network.
	{Name: KeyRequestMaxBytes, Type: Int, Default: "104857600", Check: AtLeast(1),
		Doc: "Largest request frame; larger frames close the connection."},
	{Name: KeyConnectionsMaxIdle, Type: Long, Default: "600000", Check: AtLeast(0),
		Doc: "Idle connections are closed after this long (0: never)."},
	{Name: KeyMaxConnections, Type: Int, Default: intMax, Check: AtLeast(0), Dynamic: true,
		Doc: "Most connections the broker accepts (the inter-broker listener is spared when there are several); listener.name.<listener>.max.connections caps one listener. Not set, samsa serve derives it from the file descriptor limit: (limit - min(2048, limit/2)) / 2."},
	{Name: "queued.max.request.bytes", Type: Long, Default: "268435456", Check: AtLeast(-1),
		Doc: "Memory, over all connections, for large requests (64 KiB and up) still being received; one that does not fit waits unread. -1 or 0: unbounded."},
	{Name: "samsa.request.read.timeout.ms", Type: Long, Default: "30000", Check: AtLeast(0),
		Doc: "A connection whose request takes longer than this to arrive in full, from its first byte, is closed (0: never)."},
	{Name: KeyMaxConnectionsPerIP, Type: Int, Default: intMax, Check: AtLeast(0), Dynamic: true,
		Doc: "Most connections from one client address."},
	{Name: KeyMaxConnectionsPerIPOverrides, Type: String, Default: "", Check: checkPerIPOverrides, Dynamic: true,
		Doc: "Per-host limits in place of max.connections.per.ip: <host or address>:<count>,...; host names are resolved when the value is set (at start, or by AlterConfigs)."},
	{Name: KeyMaxConnectionCreationRate, Type: Int, Default: intMax, Check: AtLeast(0), Dynamic: true,
		Doc: "Most new connections per second the broker accepts (the inter-broker listener is spared when there are several): over it, listeners stop accepting for the throttle time. listener.name.<listener>.max.connection.creation.rate sets one listener's."},
	{Name: "socket.send.buffer.bytes", Type: Int, Default: "102400", Ignored: true, Doc: "Accepted; the OS default is used."},
	{Name: "socket.receive.buffer.bytes", Type: Int, Default: "102400", Ignored: true, Doc: "Accepted; the OS default is used."},
	{Name: KeyNetworkThreads, Type: Int, Default: "3", Check: AtLeast(1), Dynamic: true, Inert: true,
		Doc: "Number of network event loops."},
	{Name: "num.io.threads", Type: Int, Default: "8", Check: AtLeast(1), Ignored: true, Dynamic: true,
		Doc: "Accepted; requests run in actors, not an I/O thread pool."},
	{Name: "queued.max.requests", Type: Int, Default: "500", Check: AtLeast(1), Ignored: true, Doc: "Accepted; backpressure is per connection."},
	{Name: "background.threads", Type: Int, Default: "10", Check: AtLeast(1), Ignored: true, Dynamic: true, Doc: "Accepted; unused."},
	{Name: KeyReplicaLagTimeMax, Type: Long, Default: "30000", Check: AtLeast(1),
		Doc: "Cluster mode: a follower that has not caught up with its leader for this long leaves the ISR."},
	{Name: KeyReplicaFetchWaitMax, Type: Int, Default: "500", Check: AtLeast(0),
		Doc: "Cluster mode: how long a follower's fetch waits at the leader for new data."},
	{Name: KeyReplicaFetchMinBytes, Type: Int, Default: "1", Check: AtLeast(1),
		Doc: "Cluster mode: the data a follower's fetch waits for at the leader."},
	{Name: KeyReplicaFetchMaxBytes, Type: Int, Default: "1048576", Check: AtLeast(0),
		Doc: "Cluster mode: the most data per partition in one follower fetch (a larger first batch still comes whole)."},
	{Name: KeyReplicaFetchResponseMaxBytes, Type: Int, Default: "10485760", Check: AtLeast(0),
		Doc: "Cluster mode: the most data in one follower fetch answer."},
	{Name: KeyReplicaFetchBackoff, Type: Int, Default: "1000", Check: AtLeast(0),
		Doc: "Cluster mode: the pause after a follower fetch failed."},
	{Name: KeyReplicaHWCheckpointInterval, Type: Long, Default: "5000", Check: AtLeast(1),
		Doc: "How often each data directory writes its replication-offset-checkpoint (every partition's high watermark), so a restarted replica starts from its high watermark."},
	{Name: KeyReplicaSelectorClass, Type: String, Nullable: true, Check: OneOf("", RackAwareReplicaSelector),
		Doc: "KIP-392 fetch from the closest replica: with " + RackAwareReplicaSelector + " a leader points a consumer that names its rack (client.rack) at an in-sync replica in that rack, which serves it up to its high watermark. Unset: consumers fetch from the leader."},
	{Name: "num.replica.fetchers", Type: Int, Default: "1", Check: AtLeast(1), Ignored: true,
		Doc: "Accepted; samsa runs one fetcher per leader broker."},
	{Name: KeyAutoLeaderRebalance, Type: Boolean, Default: "true",
		Doc: "Cluster mode: the controller moves leadership back to the preferred replicas (the first of each assignment) of a broker whose share of partitions led elsewhere is above leader.imbalance.per.broker.percentage, checking every leader.imbalance.check.interval.seconds."},
	{Name: KeyLeaderImbalanceCheckInterval, Type: Long, Default: "300", Check: AtLeast(1),
		Doc: "Cluster mode: how often the controller checks the leader balance (auto.leader.rebalance.enable)."},
	{Name: KeyLeaderImbalancePerBroker, Type: Int, Default: "10",
		Doc: "Cluster mode: the share (percent) of a broker's preferred partitions that may be led elsewhere before the controller moves them back (unchecked, as in Kafka: 100 or more never moves them)."},
	{Name: KeyControlledShutdown, Type: Boolean, Default: "true",
		Doc: "Cluster mode: on SIGTERM the broker asks the controller to move the leaderships it holds to other replicas before it stops."},
	{Name: "max.incremental.fetch.session.cache.slots", Type: Int, Default: "1000", Check: AtLeast(0),
		Doc: "Most incremental fetch sessions (KIP-227) kept at once; 0 turns sessions off, so every fetch is a full one."},
	{Name: "fetch.max.bytes", Type: Int, Default: "57671680", Check: AtLeast(1024),
		Doc: "The most record data one fetch response carries, whatever its max_bytes asks (the first batch is always sent whole, so a consumer can progress). Kafka's default, 55 MiB."},

	// Groups and transactions (their coordinators come later).
	{Name: KeyOffsetsReplicationFactor, Type: Short, Default: "3", Check: AtLeast(1),
		Doc: "Cluster mode: replication factor of __consumer_offsets. Until this many brokers are up, the topic is not made and group coordinators are not available (as in Kafka). A single broker ignores it."},
	{Name: "offsets.topic.num.partitions", Type: Int, Default: "50", Check: AtLeast(1), Doc: "Partitions of __consumer_offsets, made on first start; a group lives on abs(hash(group id)) % this. Changing it later moves groups away from their offsets."},
	{Name: "offsets.topic.segment.bytes", Type: Int, Default: "104857600", Check: AtLeast(14), Doc: "segment.bytes of __consumer_offsets."},
	{Name: "offsets.retention.minutes", Type: Int, Default: "10080", Check: AtLeast(1), Doc: "Committed offsets of an empty group are dropped after this long."},
	{Name: "offsets.retention.check.interval.ms", Type: Long, Default: "600000", Check: AtLeast(1), Doc: "How often expired offsets are looked for."},
	{Name: "offset.metadata.max.bytes", Type: Int, Default: "4096", Check: AtLeast(0), Doc: "Longest metadata string of a committed offset."},
	{Name: "group.max.size", Type: Int, Default: "2147483647", Check: AtLeast(1), Doc: "Most members a consumer group may have."},
	{Name: "transaction.state.log.replication.factor", Type: Short, Default: "3", Check: AtLeast(1),
		Doc: "Cluster mode: replication factor of __transaction_state. Until this many brokers are up, the topic is not made and transaction coordinators are not available (as in Kafka). A single broker ignores it."},
	{Name: "transaction.state.log.min.isr", Type: Int, Default: "2", Check: AtLeast(1), Doc: "min.insync.replicas of __transaction_state (a single broker uses 1)."},
	{Name: "transaction.state.log.num.partitions", Type: Int, Default: "50", Check: AtLeast(1), Doc: "Partitions of __transaction_state, made on the first transactional request; a transactional id lives on abs(hash(id)) % this."},
	{Name: "transaction.state.log.segment.bytes", Type: Int, Default: "104857600", Check: AtLeast(14), Doc: "segment.bytes of __transaction_state."},
	{Name: "transaction.max.timeout.ms", Type: Int, Default: "900000", Check: AtLeast(1), Doc: "Longest transaction timeout a producer may ask for; a longer one is INVALID_TRANSACTION_TIMEOUT."},
	{Name: "transactional.id.expiration.ms", Type: Int, Default: "604800000", Check: AtLeast(1), Doc: "A transactional id with no transaction for this long is forgotten."},
	{Name: "transaction.abort.timed.out.transaction.cleanup.interval.ms", Type: Int, Default: "10000", Check: AtLeast(1), Doc: "How often transactions open past their timeout are looked for (and aborted)."},
	{Name: "transaction.remove.expired.transaction.cleanup.interval.ms", Type: Int, Default: "3600000", Check: AtLeast(1), Doc: "How often expired transactional ids are looked for."},
	{Name: "group.initial.rebalance.delay.ms", Type: Int, Default: "3000", Check: AtLeast(0), Doc: "How long the first rebalance of an empty group waits for more members."},
	{Name: "group.min.session.timeout.ms", Type: Int, Default: "6000", Check: AtLeast(1), Doc: "Smallest session timeout a group member may ask for."},
	{Name: "group.max.session.timeout.ms", Type: Int, Default: "1800000", Check: AtLeast(1), Doc: "Largest session timeout a group member may ask for."},

	// samsa's own.
	{Name: KeyShutdownTimeout, Type: Long, Default: "30000", Check: AtLeast(1),
		Doc: "Longest graceful shutdown: requests in flight finish and logs close within this time."},
	{Name: KeyHTTPListeners, Type: List, Default: "", Check: httpListeners,
		Doc: "HOST:PORT[,HOST:PORT] for the HTTP side: /metrics, /healthz, /readyz, the console, the Schema Registry and REST proxy (off when empty)."},
}

var brokerIndex = index(slices.Concat(brokerDefs, kafkaDynamicDefs, groupBrokerDefs, consumerGroupBrokerDefs, shareDefs, aclDefs, saslDefs, quotaDefs, consoleDefs))

// BrokerDef returns the definition of a broker config.
func BrokerDef(name string) (*Def, bool) {
	d, ok := brokerIndex[name]
	return d, ok
}

// BrokerDefs returns every broker config definition, sorted by name.
func BrokerDefs() []*Def { return sortedDefs(brokerIndex) }
