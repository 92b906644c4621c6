package wire

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// APIRange is one row of the broker's API table: the versions of an API it
// advertises in ApiVersions. Accept may be higher than Min: a version in
// [Min, Accept) is advertised for client feature detection but refused (see
// the Produce row in plannedAPIs).
type APIRange struct {
	Key    int16
	Min    int16 // advertised minimum
	Max    int16 // advertised and accepted maximum
	Accept int16 // lowest version actually accepted (>= Min)
}

// APIs is the one table that both builds the ApiVersions response and
// decides which request versions are accepted. A key absent here is not
// implemented: it is neither advertised nor accepted. Ranges follow
// reference/kafka-protocol.md §1d so that every mainstream client
// negotiates a version it speaks; the reasons per row are in doc.go
// ("Versions") and TestRangesServeEveryClient checks them against what
// the pinned clients send.
//
// Rows are added as the broker implements the API; advertising an API the
// broker does not serve makes clients use it (Java's telemetry is the
// textbook case), so never list one ahead of its handler. The rows waiting
// for a handler are in plannedAPIs: enabling an API is moving its row.
var APIs = []APIRange{
	// Fetch: 4 is the first RecordBatch-only version; librdkafka 2.0 and
	// kafkajs send <= 11, kafka-python 4. 13 names topics by their
	// persisted IDs (Java caps at 12 unless every topic has an id); 15
	// moves the replica id into ReplicaState, 16 adds NodeEndpoints, 17
	// (Kafka 3.9's maximum) the replica's directory id.
	{Key: 1, Min: 4, Max: 17, Accept: 4},
	// Produce: advertised from 0, accepted from 3 (magic 2 only), as
	// Kafka 4 does (KAFKA-18659): librdkafka < 2.10 turns compression off
	// unless the Produce range overlaps [0,0]. 12 (transactions v2,
	// KIP-890) stays out until implemented. kafkajs needs <= 7 in range.
	{Key: 0, Min: 0, Max: 11, Accept: 3},
	// ListOffsets: kafka-go/kafka-python v1, librdkafka 2.0 ≤2; 9 is the
	// last version before TimeoutMillis (v10), which no client needs.
	{Key: 2, Min: 1, Max: 9, Accept: 1},
	// Metadata: v0 for kafka-python/kafka-go Conn (v1), librdkafka 2.0 (≤4),
	// kafkajs (≤6); 13 (top-level error code) is not needed by any client.
	{Key: 3, Min: 0, Max: 12, Accept: 0},
	// ApiVersions: kafka-go and kafka-python send v0, kafkajs v2,
	// librdkafka and sarama v3, Java and franz-go v4.
	{Key: 18, Min: 0, Max: 4, Accept: 0},
	// CreateTopics/DeleteTopics: kafka-go <= 0.4.47 sends v0 without
	// negotiating; Kafka 3.9 still served v0, so keep it.
	{Key: 19, Min: 0, Max: 7, Accept: 0},
	{Key: 20, Min: 0, Max: 6, Accept: 0},
	{Key: 21, Min: 0, Max: 2, Accept: 0}, // DeleteRecords
	{Key: 22, Min: 0, Max: 4, Accept: 0}, // InitProducerId: kafkajs v0-1
	// OffsetForLeaderEpoch: librdkafka >= 2.1 sends exactly v2 without
	// checking; Java validates positions only when max >= 3.
	{Key: 23, Min: 2, Max: 4, Accept: 2},
	// DescribeConfigs: sarama with Config.Version < 1.1 sends v0.
	{Key: 32, Min: 0, Max: 4, Accept: 0},
	{Key: 33, Min: 0, Max: 2, Accept: 0}, // AlterConfigs
	{Key: 35, Min: 0, Max: 4, Accept: 0}, // DescribeLogDirs
	{Key: 37, Min: 0, Max: 3, Accept: 0}, // CreatePartitions
	{Key: 44, Min: 0, Max: 1, Accept: 0}, // IncrementalAlterConfigs
	{Key: 60, Min: 0, Max: 1, Accept: 0}, // DescribeCluster
	// DescribeAcls, CreateAcls, DeleteAcls: Kafka 3.9 serves 0-3 and
	// answers SECURITY_DISABLED without an authorizer, as samsa does.
	{Key: 29, Min: 0, Max: 3, Accept: 0},
	{Key: 30, Min: 0, Max: 3, Accept: 0},
	{Key: 31, Min: 0, Max: 3, Accept: 0},
	{Key: 61, Min: 0, Max: 0, Accept: 0}, // DescribeProducers: Kafka 3.9 serves 0
	// Consumer groups. OffsetCommit: kafka-go/kafka-python v2, kafkajs
	// ≤5; OffsetFetch: kafka-go/kafka-python v1, kafkajs ≤4, v8 batches
	// groups; FindCoordinator: kafka-go/kafka-python v0, v4 batches keys
	// (5 and 6 have v4's body; 6 adds share-group keys, answered
	// INVALID_REQUEST). JoinGroup from 0: librdkafka < 2.11 derives
	// SASL/GSSAPI support from a [0,0] overlap; kafka-go <= 0.4.47 and
	// sarama <= 1.40 send v1. Heartbeat/LeaveGroup/SyncGroup: kafka-go v0.
	// ListGroups 5 adds the type filter.
	{Key: 8, Min: 2, Max: 9, Accept: 2},
	{Key: 9, Min: 1, Max: 9, Accept: 1},
	{Key: 10, Min: 0, Max: 6, Accept: 0},
	{Key: 11, Min: 0, Max: 9, Accept: 0},
	{Key: 12, Min: 0, Max: 4, Accept: 0},
	{Key: 13, Min: 0, Max: 5, Accept: 0},
	{Key: 14, Min: 0, Max: 5, Accept: 0},
	{Key: 15, Min: 0, Max: 5, Accept: 0},
	{Key: 16, Min: 0, Max: 5, Accept: 0},
	{Key: 42, Min: 0, Max: 2, Accept: 0}, // DeleteGroups
	{Key: 47, Min: 0, Max: 0, Accept: 0}, // OffsetDelete
	// KIP-848 consumer groups, as Kafka 4.1 serves them: 1 adds the
	// server-side regex and client-made member ids (ConsumerGroupHeartbeat)
	// and the member type (ConsumerGroupDescribe).
	{Key: 68, Min: 0, Max: 1, Accept: 0}, // ConsumerGroupHeartbeat
	{Key: 69, Min: 0, Max: 1, Accept: 0}, // ConsumerGroupDescribe
	// SASL: v0 handshakes are answered and refused (unframed tokens).
	{Key: 17, Min: 0, Max: 1, Accept: 0}, // SaslHandshake
	{Key: 36, Min: 0, Max: 2, Accept: 0}, // SaslAuthenticate
	{Key: 48, Min: 0, Max: 1, Accept: 0}, // DescribeClientQuotas (kafka-configs --describe users)
	{Key: 49, Min: 0, Max: 1, Accept: 0}, // AlterClientQuotas
	{Key: 50, Min: 0, Max: 0, Accept: 0}, // DescribeUserScramCredentials
	{Key: 51, Min: 0, Max: 0, Accept: 0}, // AlterUserScramCredentials
}

// plannedAPIs holds the recommended ranges of the APIs the broker will
// serve but does not yet. They are NOT advertised or accepted: the API
// work enables one by moving its row into APIs, together with its handler.
// The test suite checks these ranges too, so the client guarantees hold the
// day a row moves.
var plannedAPIs = []APIRange{}

// TransactionAPIs are the transaction coordinator's APIs and the
// markers' (WriteTxnMarkers, coordinator to partition leaders), served
// and advertised only by a broker that runs transaction coordinators
// (EnableTransactionAPIs): advertising them makes clients use them.
var TransactionAPIs = []APIRange{
	// AddPartitionsToTxn: librdkafka sends v0; clients stop at 3, 4+
	// (Kafka 3.9 serves 0-5) is the brokers' KIP-890 verification.
	{Key: 24, Min: 0, Max: 5, Accept: 0},
	{Key: 25, Min: 0, Max: 3, Accept: 0}, // AddOffsetsToTxn: librdkafka v0 only
	// EndTxn: Kafka 3.9 serves 0-4 (4: the client knows
	// TRANSACTION_ABORTABLE); 5, KIP-890 part 2's epoch bump, is Kafka 4.
	{Key: 26, Min: 0, Max: 4, Accept: 0},
	{Key: 27, Min: 0, Max: 1, Accept: 0}, // WriteTxnMarkers: Kafka 3.9 serves 0-1
	{Key: 28, Min: 0, Max: 3, Accept: 0}, // TxnOffsetCommit
	{Key: 65, Min: 0, Max: 0, Accept: 0}, // DescribeTransactions
	{Key: 66, Min: 0, Max: 1, Accept: 0}, // ListTransactions: 1 adds the duration filter
}

// InterBrokerAPIs are the controller's and the brokers' own APIs of
// ZooKeeper mode, at the ranges Apache Kafka 3.9 serves them:
// LeaderAndIsr, StopReplica, UpdateMetadata and ControlledShutdown
// (controller to broker, and a stopping broker to the controller),
// AlterPartition and AllocateProducerIds (broker to controller), and
// ElectLeaders (an admin to the controller: a single broker has no
// replicas to elect). A broker serves and advertises them only in cluster
// mode (EnableInterBrokerAPIs).
var InterBrokerAPIs = []APIRange{
	{Key: 4, Min: 0, Max: 7, Accept: 0},  // LeaderAndIsr
	{Key: 5, Min: 0, Max: 4, Accept: 0},  // StopReplica
	{Key: 6, Min: 0, Max: 8, Accept: 0},  // UpdateMetadata
	{Key: 7, Min: 0, Max: 3, Accept: 0},  // ControlledShutdown
	{Key: 56, Min: 0, Max: 3, Accept: 0}, // AlterPartition
	{Key: 67, Min: 0, Max: 0, Accept: 0}, // AllocateProducerIds
	{Key: 43, Min: 0, Max: 2, Accept: 0}, // ElectLeaders (admin, to the controller)
	{Key: 45, Min: 0, Max: 0, Accept: 0}, // AlterPartitionReassignments (to the controller)
	{Key: 46, Min: 0, Max: 0, Accept: 0}, // ListPartitionReassignments (to the controller)
}

// ShareGroupAPIs are the share-group APIs (KIP-932, actors/sharegroup) at
// Kafka 4.1's versions: v0 of the first four was 4.0's early access and is
// gone from 4.1; ShareFetch/ShareAcknowledge v2 are 4.2's. Every broker,
// alone or in a cluster, serves and advertises them (EnableShareGroupAPIs).
var ShareGroupAPIs = []APIRange{
	{Key: 76, Min: 1, Max: 1, Accept: 1}, // ShareGroupHeartbeat
	{Key: 77, Min: 1, Max: 1, Accept: 1}, // ShareGroupDescribe
	{Key: 78, Min: 1, Max: 1, Accept: 1}, // ShareFetch
	{Key: 79, Min: 1, Max: 1, Accept: 1}, // ShareAcknowledge
	{Key: 90, Min: 0, Max: 1, Accept: 0}, // DescribeShareGroupOffsets: 1 adds the lag
	{Key: 91, Min: 0, Max: 0, Accept: 0}, // AlterShareGroupOffsets
	{Key: 92, Min: 0, Max: 0, Accept: 0}, // DeleteShareGroupOffsets
}

var apiByKey = indexAPIs()

func indexAPIs() map[int16]APIRange {
	m := make(map[int16]APIRange, len(APIs))
	for _, a := range APIs {
		m[a.Key] = a
	}
	return m
}

// EnableInterBrokerAPIs adds InterBrokerAPIs to the served and advertised
// table. A broker in cluster mode calls it once, before it serves; it
// holds for the whole process (brokers of one process are all in cluster
// mode or all alone).
func EnableInterBrokerAPIs() {
	enableRows(&interBrokerOnce, InterBrokerAPIs)
}

var interBrokerOnce, transactionsOnce, shareGroupsOnce sync.Once

// enableRows adds rows to the served and advertised table, once.
func enableRows(once *sync.Once, rows []APIRange) {
	once.Do(func() {
		for _, a := range rows {
			if _, ok := apiByKey[a.Key]; !ok {
				APIs = append(APIs, a)
			}
		}
		apiByKey = indexAPIs()
	})
}

// EnableShareGroupAPIs adds ShareGroupAPIs to the served and advertised
// table; like EnableInterBrokerAPIs it holds for the whole process.
func EnableShareGroupAPIs() {
	enableRows(&shareGroupsOnce, ShareGroupAPIs)
}

// EnableTransactionAPIs adds TransactionAPIs to the served and advertised
// table; like EnableInterBrokerAPIs it holds for the whole process.
func EnableTransactionAPIs() {
	enableRows(&transactionsOnce, TransactionAPIs)
}

// LookupAPI returns the table row for key.
func LookupAPI(key int16) (APIRange, bool) {
	a, ok := apiByKey[key]
	return a, ok
}

// Accepts reports whether the broker accepts requests of this key and
// version.
func Accepts(key, version int16) bool {
	a, ok := apiByKey[key]
	return ok && version >= a.Accept && version <= a.Max
}

// APIName is the protocol name of an API key, for logs.
func APIName(key int16) string { return kmsg.NameForKey(key) }
