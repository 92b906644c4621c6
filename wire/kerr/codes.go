package kerr

import (
	"errors"
	"strconv"
)

// Code is a Kafka protocol error code, as carried in responses.
type Code int16

// Kafka error codes. The numbers are part of the wire protocol.
const (
	UnknownServerError                 Code = -1
	None                               Code = 0
	OffsetOutOfRange                   Code = 1
	CorruptMessage                     Code = 2
	UnknownTopicOrPartition            Code = 3
	InvalidFetchSize                   Code = 4
	LeaderNotAvailable                 Code = 5
	NotLeaderOrFollower                Code = 6
	RequestTimedOut                    Code = 7
	BrokerNotAvailable                 Code = 8
	ReplicaNotAvailable                Code = 9
	MessageTooLarge                    Code = 10
	StaleControllerEpoch               Code = 11
	OffsetMetadataTooLarge             Code = 12
	NetworkException                   Code = 13
	CoordinatorLoadInProgress          Code = 14
	CoordinatorNotAvailable            Code = 15
	NotCoordinator                     Code = 16
	InvalidTopicException              Code = 17
	RecordListTooLarge                 Code = 18
	NotEnoughReplicas                  Code = 19
	NotEnoughReplicasAfterAppend       Code = 20
	InvalidRequiredAcks                Code = 21
	IllegalGeneration                  Code = 22
	InconsistentGroupProtocol          Code = 23
	InvalidGroupID                     Code = 24
	UnknownMemberID                    Code = 25
	InvalidSessionTimeout              Code = 26
	RebalanceInProgress                Code = 27
	InvalidCommitOffsetSize            Code = 28
	TopicAuthorizationFailed           Code = 29
	GroupAuthorizationFailed           Code = 30
	ClusterAuthorizationFailed         Code = 31
	InvalidTimestamp                   Code = 32
	UnsupportedSaslMechanism           Code = 33
	IllegalSaslState                   Code = 34
	UnsupportedVersion                 Code = 35
	TopicAlreadyExists                 Code = 36
	InvalidPartitions                  Code = 37
	InvalidReplicationFactor           Code = 38
	InvalidReplicaAssignment           Code = 39
	InvalidConfig                      Code = 40
	NotController                      Code = 41
	InvalidRequest                     Code = 42
	UnsupportedForMessageFormat        Code = 43
	PolicyViolation                    Code = 44
	OutOfOrderSequenceNumber           Code = 45
	DuplicateSequenceNumber            Code = 46
	InvalidProducerEpoch               Code = 47
	InvalidTxnState                    Code = 48
	InvalidProducerIDMapping           Code = 49
	InvalidTransactionTimeout          Code = 50
	ConcurrentTransactions             Code = 51
	TransactionCoordinatorFenced       Code = 52
	TransactionalIDAuthorizationFailed Code = 53
	SecurityDisabled                   Code = 54
	OperationNotAttempted              Code = 55
	KafkaStorageError                  Code = 56
	LogDirNotFound                     Code = 57
	SaslAuthenticationFailed           Code = 58
	UnknownProducerID                  Code = 59
	ReassignmentInProgress             Code = 60
	DelegationTokenAuthDisabled        Code = 61
	DelegationTokenNotFound            Code = 62
	DelegationTokenOwnerMismatch       Code = 63
	DelegationTokenRequestNotAllowed   Code = 64
	DelegationTokenAuthorizationFailed Code = 65
	DelegationTokenExpired             Code = 66
	InvalidPrincipalType               Code = 67
	NonEmptyGroup                      Code = 68
	GroupIDNotFound                    Code = 69
	FetchSessionIDNotFound             Code = 70
	InvalidFetchSessionEpoch           Code = 71
	ListenerNotFound                   Code = 72
	TopicDeletionDisabled              Code = 73
	FencedLeaderEpoch                  Code = 74
	UnknownLeaderEpoch                 Code = 75
	UnsupportedCompressionType         Code = 76
	StaleBrokerEpoch                   Code = 77
	OffsetNotAvailable                 Code = 78
	MemberIDRequired                   Code = 79
	PreferredLeaderNotAvailable        Code = 80
	GroupMaxSizeReached                Code = 81
	FencedInstanceID                   Code = 82
	EligibleLeadersNotAvailable        Code = 83
	ElectionNotNeeded                  Code = 84
	NoReassignmentInProgress           Code = 85
	GroupSubscribedToTopic             Code = 86
	InvalidRecord                      Code = 87
	UnstableOffsetCommit               Code = 88
	ThrottlingQuotaExceeded            Code = 89
	ProducerFenced                     Code = 90
	ResourceNotFound                   Code = 91
	DuplicateResource                  Code = 92
	UnacceptableCredential             Code = 93
	InconsistentVoterSet               Code = 94
	InvalidUpdateVersion               Code = 95
	FeatureUpdateFailed                Code = 96
	PrincipalDeserializationFailure    Code = 97
	SnapshotNotFound                   Code = 98
	PositionOutOfRange                 Code = 99
	UnknownTopicID                     Code = 100
	DuplicateBrokerRegistration        Code = 101
	BrokerIDNotRegistered              Code = 102
	InconsistentTopicID                Code = 103
	InconsistentClusterID              Code = 104
	TransactionalIDNotFound            Code = 105
	FetchSessionTopicIDError           Code = 106
	IneligibleReplica                  Code = 107
	NewLeaderElected                   Code = 108
	OffsetMovedToTieredStorage         Code = 109
	FencedMemberEpoch                  Code = 110
	UnreleasedInstanceID               Code = 111
	UnsupportedAssignor                Code = 112
	StaleMemberEpoch                   Code = 113
	MismatchedEndpointType             Code = 114
	UnsupportedEndpointType            Code = 115
	UnknownControllerID                Code = 116
	UnknownSubscriptionID              Code = 117
	TelemetryTooLarge                  Code = 118
	InvalidRegistration                Code = 119
	TransactionAbortable               Code = 120
	InvalidRecordState                 Code = 121 // share groups (KIP-932)
	ShareSessionNotFound               Code = 122
	InvalidShareSessionEpoch           Code = 123
)

// info is what the broker knows about one code.
type info struct {
	name      string
	retriable bool
	message   string
}

// codes is indexed by code+1 (UnknownServerError is -1). Retriability is
// the client-side view: whether Kafka clients retry a request that failed
// with the code (franz-go's table, which the tests cross-check, is the
// reference: it marks BROKER_NOT_AVAILABLE retriable and
// CONCURRENT_TRANSACTIONS not, the producer retrying the latter itself).
var codes = [...]info{
	UnknownServerError + 1:                 {"UNKNOWN_SERVER_ERROR", false, "The broker hit an unexpected error while handling the request."},
	None + 1:                               {"NONE", false, ""},
	OffsetOutOfRange + 1:                   {"OFFSET_OUT_OF_RANGE", false, "The requested offset is outside the range of offsets the partition holds."},
	CorruptMessage + 1:                     {"CORRUPT_MESSAGE", true, "The record batch failed its checksum or is otherwise corrupt."},
	UnknownTopicOrPartition + 1:            {"UNKNOWN_TOPIC_OR_PARTITION", true, "This broker does not host the topic or partition."},
	InvalidFetchSize + 1:                   {"INVALID_FETCH_SIZE", false, "The requested fetch size is invalid."},
	LeaderNotAvailable + 1:                 {"LEADER_NOT_AVAILABLE", true, "The partition has no leader right now (an election is under way)."},
	NotLeaderOrFollower + 1:                {"NOT_LEADER_OR_FOLLOWER", true, "This broker is neither the leader nor a follower of the partition; refresh metadata."},
	RequestTimedOut + 1:                    {"REQUEST_TIMED_OUT", true, "The request timed out."},
	BrokerNotAvailable + 1:                 {"BROKER_NOT_AVAILABLE", true, "The broker is not available."},
	ReplicaNotAvailable + 1:                {"REPLICA_NOT_AVAILABLE", true, "The replica is not available for the partition."},
	MessageTooLarge + 1:                    {"MESSAGE_TOO_LARGE", false, "The record batch is larger than the topic's max.message.bytes."},
	StaleControllerEpoch + 1:               {"STALE_CONTROLLER_EPOCH", false, "The controller epoch is older than the broker's."},
	OffsetMetadataTooLarge + 1:             {"OFFSET_METADATA_TOO_LARGE", false, "The committed offset metadata is too large."},
	NetworkException + 1:                   {"NETWORK_EXCEPTION", true, "The connection was closed before the response arrived."},
	CoordinatorLoadInProgress + 1:          {"COORDINATOR_LOAD_IN_PROGRESS", true, "The coordinator is still loading its state; retry shortly."},
	CoordinatorNotAvailable + 1:            {"COORDINATOR_NOT_AVAILABLE", true, "The coordinator is not available."},
	NotCoordinator + 1:                     {"NOT_COORDINATOR", true, "This broker is not the coordinator; find the coordinator again."},
	InvalidTopicException + 1:              {"INVALID_TOPIC_EXCEPTION", false, "The topic name is invalid (use up to 249 characters from [a-zA-Z0-9._-], not '.' or '..')."},
	RecordListTooLarge + 1:                 {"RECORD_LIST_TOO_LARGE", false, "The produce request's records exceed the segment size."},
	NotEnoughReplicas + 1:                  {"NOT_ENOUGH_REPLICAS", true, "Fewer in-sync replicas than min.insync.replicas; the records were not written."},
	NotEnoughReplicasAfterAppend + 1:       {"NOT_ENOUGH_REPLICAS_AFTER_APPEND", true, "The records were written but fewer in-sync replicas than min.insync.replicas acknowledged them."},
	InvalidRequiredAcks + 1:                {"INVALID_REQUIRED_ACKS", false, "acks must be -1 (all), 0 or 1."},
	IllegalGeneration + 1:                  {"ILLEGAL_GENERATION", false, "The group generation is not the current one."},
	InconsistentGroupProtocol + 1:          {"INCONSISTENT_GROUP_PROTOCOL", false, "The member's protocols do not match the group's."},
	InvalidGroupID + 1:                     {"INVALID_GROUP_ID", false, "The group id is empty or invalid."},
	UnknownMemberID + 1:                    {"UNKNOWN_MEMBER_ID", false, "The group does not know this member id."},
	InvalidSessionTimeout + 1:              {"INVALID_SESSION_TIMEOUT", false, "The session timeout is outside the broker's group.min/max.session.timeout.ms."},
	RebalanceInProgress + 1:                {"REBALANCE_IN_PROGRESS", false, "The group is rebalancing; rejoin."},
	InvalidCommitOffsetSize + 1:            {"INVALID_COMMIT_OFFSET_SIZE", false, "The offset commit is too large."},
	TopicAuthorizationFailed + 1:           {"TOPIC_AUTHORIZATION_FAILED", false, "Not authorized to access the topic."},
	GroupAuthorizationFailed + 1:           {"GROUP_AUTHORIZATION_FAILED", false, "Not authorized to access the group."},
	ClusterAuthorizationFailed + 1:         {"CLUSTER_AUTHORIZATION_FAILED", false, "Not authorized for this cluster operation."},
	InvalidTimestamp + 1:                   {"INVALID_TIMESTAMP", false, "A record timestamp is outside the topic's accepted range."},
	UnsupportedSaslMechanism + 1:           {"UNSUPPORTED_SASL_MECHANISM", false, "The broker does not support the requested SASL mechanism."},
	IllegalSaslState + 1:                   {"ILLEGAL_SASL_STATE", false, "The request is not valid in the current SASL state."},
	UnsupportedVersion + 1:                 {"UNSUPPORTED_VERSION", false, "The broker does not support this version of the API."},
	TopicAlreadyExists + 1:                 {"TOPIC_ALREADY_EXISTS", false, "The topic already exists."},
	InvalidPartitions + 1:                  {"INVALID_PARTITIONS", false, "The number of partitions is invalid."},
	InvalidReplicationFactor + 1:           {"INVALID_REPLICATION_FACTOR", false, "The replication factor is invalid or larger than the number of live brokers."},
	InvalidReplicaAssignment + 1:           {"INVALID_REPLICA_ASSIGNMENT", false, "The replica assignment is invalid."},
	InvalidConfig + 1:                      {"INVALID_CONFIG", false, "A configuration value is invalid."},
	NotController + 1:                      {"NOT_CONTROLLER", true, "This broker is not the controller."},
	InvalidRequest + 1:                     {"INVALID_REQUEST", false, "The request is malformed or violates the protocol."},
	UnsupportedForMessageFormat + 1:        {"UNSUPPORTED_FOR_MESSAGE_FORMAT", false, "The message format does not support this request (only record batch magic 2 is accepted)."},
	PolicyViolation + 1:                    {"POLICY_VIOLATION", false, "The request violates a broker policy."},
	OutOfOrderSequenceNumber + 1:           {"OUT_OF_ORDER_SEQUENCE_NUMBER", false, "The producer sequence number is out of order."},
	DuplicateSequenceNumber + 1:            {"DUPLICATE_SEQUENCE_NUMBER", false, "The producer sequence number duplicates an earlier batch."},
	InvalidProducerEpoch + 1:               {"INVALID_PRODUCER_EPOCH", false, "The producer epoch is older than the current one; the producer was fenced."},
	InvalidTxnState + 1:                    {"INVALID_TXN_STATE", false, "The request is not valid in the transaction's current state."},
	InvalidProducerIDMapping + 1:           {"INVALID_PRODUCER_ID_MAPPING", false, "The producer id does not match the transactional id."},
	InvalidTransactionTimeout + 1:          {"INVALID_TRANSACTION_TIMEOUT", false, "The transaction timeout exceeds transaction.max.timeout.ms."},
	ConcurrentTransactions + 1:             {"CONCURRENT_TRANSACTIONS", false, "Another transaction operation on this transactional id is still completing; retry shortly."},
	TransactionCoordinatorFenced + 1:       {"TRANSACTION_COORDINATOR_FENCED", false, "The transaction coordinator's epoch is stale."},
	TransactionalIDAuthorizationFailed + 1: {"TRANSACTIONAL_ID_AUTHORIZATION_FAILED", false, "Not authorized for the transactional id."},
	SecurityDisabled + 1:                   {"SECURITY_DISABLED", false, "Security features are disabled on this broker."},
	OperationNotAttempted + 1:              {"OPERATION_NOT_ATTEMPTED", false, "The operation was not attempted because another part of the request failed."},
	KafkaStorageError + 1:                  {"KAFKA_STORAGE_ERROR", true, "The partition's log directory is offline after a disk error."},
	LogDirNotFound + 1:                     {"LOG_DIR_NOT_FOUND", false, "The log directory is not known to the broker."},
	SaslAuthenticationFailed + 1:           {"SASL_AUTHENTICATION_FAILED", false, "SASL authentication failed."},
	UnknownProducerID + 1:                  {"UNKNOWN_PRODUCER_ID", false, "The broker holds no state for this producer id."},
	ReassignmentInProgress + 1:             {"REASSIGNMENT_IN_PROGRESS", false, "A partition reassignment is in progress."},
	DelegationTokenAuthDisabled + 1:        {"DELEGATION_TOKEN_AUTH_DISABLED", false, "Delegation token authentication is disabled."},
	DelegationTokenNotFound + 1:            {"DELEGATION_TOKEN_NOT_FOUND", false, "The delegation token was not found."},
	DelegationTokenOwnerMismatch + 1:       {"DELEGATION_TOKEN_OWNER_MISMATCH", false, "The principal does not own the delegation token."},
	DelegationTokenRequestNotAllowed + 1:   {"DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", false, "Delegation token requests are not allowed on this connection."},
	DelegationTokenAuthorizationFailed + 1: {"DELEGATION_TOKEN_AUTHORIZATION_FAILED", false, "Not authorized for the delegation token."},
	DelegationTokenExpired + 1:             {"DELEGATION_TOKEN_EXPIRED", false, "The delegation token has expired."},
	InvalidPrincipalType + 1:               {"INVALID_PRINCIPAL_TYPE", false, "The principal type is not supported."},
	NonEmptyGroup + 1:                      {"NON_EMPTY_GROUP", false, "The group still has members."},
	GroupIDNotFound + 1:                    {"GROUP_ID_NOT_FOUND", false, "The group id does not exist."},
	FetchSessionIDNotFound + 1:             {"FETCH_SESSION_ID_NOT_FOUND", true, "The fetch session id is not known to the broker."},
	InvalidFetchSessionEpoch + 1:           {"INVALID_FETCH_SESSION_EPOCH", true, "The fetch session epoch is invalid."},
	ListenerNotFound + 1:                   {"LISTENER_NOT_FOUND", true, "The leader has no endpoint for the listener the request came on."},
	TopicDeletionDisabled + 1:              {"TOPIC_DELETION_DISABLED", false, "Topic deletion is disabled (delete.topic.enable=false)."},
	FencedLeaderEpoch + 1:                  {"FENCED_LEADER_EPOCH", true, "The leader epoch in the request is older than the broker's."},
	UnknownLeaderEpoch + 1:                 {"UNKNOWN_LEADER_EPOCH", true, "The leader epoch in the request is newer than the broker's."},
	UnsupportedCompressionType + 1:         {"UNSUPPORTED_COMPRESSION_TYPE", false, "The compression type is not supported at this request version."},
	StaleBrokerEpoch + 1:                   {"STALE_BROKER_EPOCH", false, "The broker epoch is stale."},
	OffsetNotAvailable + 1:                 {"OFFSET_NOT_AVAILABLE", true, "The offset is not available yet (the high watermark is catching up)."},
	MemberIDRequired + 1:                   {"MEMBER_ID_REQUIRED", false, "Join again with the member id given in this response."},
	PreferredLeaderNotAvailable + 1:        {"PREFERRED_LEADER_NOT_AVAILABLE", true, "The preferred leader is not available."},
	GroupMaxSizeReached + 1:                {"GROUP_MAX_SIZE_REACHED", false, "The group is at group.max.size."},
	FencedInstanceID + 1:                   {"FENCED_INSTANCE_ID", false, "Another member with the same group.instance.id fenced this one."},
	EligibleLeadersNotAvailable + 1:        {"ELIGIBLE_LEADERS_NOT_AVAILABLE", true, "No eligible leader is available for the partition."},
	ElectionNotNeeded + 1:                  {"ELECTION_NOT_NEEDED", true, "The leader election is not needed."},
	NoReassignmentInProgress + 1:           {"NO_REASSIGNMENT_IN_PROGRESS", false, "No partition reassignment is in progress."},
	GroupSubscribedToTopic + 1:             {"GROUP_SUBSCRIBED_TO_TOPIC", false, "The group is still subscribed to the topic."},
	InvalidRecord + 1:                      {"INVALID_RECORD", false, "A record in the batch is invalid."},
	UnstableOffsetCommit + 1:               {"UNSTABLE_OFFSET_COMMIT", true, "There are pending transactional offset commits for the partition."},
	ThrottlingQuotaExceeded + 1:            {"THROTTLING_QUOTA_EXCEEDED", true, "The request exceeds the throttling quota."},
	ProducerFenced + 1:                     {"PRODUCER_FENCED", false, "A newer producer with the same transactional id fenced this one."},
	ResourceNotFound + 1:                   {"RESOURCE_NOT_FOUND", false, "The resource does not exist."},
	DuplicateResource + 1:                  {"DUPLICATE_RESOURCE", false, "The request names the same resource more than once."},
	UnacceptableCredential + 1:             {"UNACCEPTABLE_CREDENTIAL", false, "The credential does not meet the broker's requirements."},
	InconsistentVoterSet + 1:               {"INCONSISTENT_VOTER_SET", false, "The voter set is inconsistent."},
	InvalidUpdateVersion + 1:               {"INVALID_UPDATE_VERSION", false, "The update version is invalid."},
	FeatureUpdateFailed + 1:                {"FEATURE_UPDATE_FAILED", false, "The feature update failed."},
	PrincipalDeserializationFailure + 1:    {"PRINCIPAL_DESERIALIZATION_FAILURE", false, "The principal could not be deserialized."},
	SnapshotNotFound + 1:                   {"SNAPSHOT_NOT_FOUND", false, "The snapshot was not found."},
	PositionOutOfRange + 1:                 {"POSITION_OUT_OF_RANGE", false, "The requested position is outside the snapshot."},
	UnknownTopicID + 1:                     {"UNKNOWN_TOPIC_ID", true, "This broker does not know the topic id."},
	DuplicateBrokerRegistration + 1:        {"DUPLICATE_BROKER_REGISTRATION", false, "A broker with this id is already registered."},
	BrokerIDNotRegistered + 1:              {"BROKER_ID_NOT_REGISTERED", false, "The broker id is not registered."},
	InconsistentTopicID + 1:                {"INCONSISTENT_TOPIC_ID", true, "The topic id does not match the topic name."},
	InconsistentClusterID + 1:              {"INCONSISTENT_CLUSTER_ID", false, "The cluster id does not match this cluster."},
	TransactionalIDNotFound + 1:            {"TRANSACTIONAL_ID_NOT_FOUND", false, "The transactional id was not found."},
	FetchSessionTopicIDError + 1:           {"FETCH_SESSION_TOPIC_ID_ERROR", true, "The fetch session's topic ids are inconsistent."},
	IneligibleReplica + 1:                  {"INELIGIBLE_REPLICA", false, "The replica is not eligible to join the ISR."},
	NewLeaderElected + 1:                   {"NEW_LEADER_ELECTED", false, "A new leader was elected; the request was not applied."},
	OffsetMovedToTieredStorage + 1:         {"OFFSET_MOVED_TO_TIERED_STORAGE", false, "The offset has moved to tiered storage."},
	FencedMemberEpoch + 1:                  {"FENCED_MEMBER_EPOCH", false, "The member epoch is fenced."},
	UnreleasedInstanceID + 1:               {"UNRELEASED_INSTANCE_ID", false, "The instance id is still in use by another member."},
	UnsupportedAssignor + 1:                {"UNSUPPORTED_ASSIGNOR", false, "The assignor is not supported."},
	StaleMemberEpoch + 1:                   {"STALE_MEMBER_EPOCH", false, "The member epoch is stale."},
	MismatchedEndpointType + 1:             {"MISMATCHED_ENDPOINT_TYPE", false, "The request was sent to an endpoint of the wrong type."},
	UnsupportedEndpointType + 1:            {"UNSUPPORTED_ENDPOINT_TYPE", false, "This endpoint type does not support the request."},
	UnknownControllerID + 1:                {"UNKNOWN_CONTROLLER_ID", false, "The controller id is not known."},
	UnknownSubscriptionID + 1:              {"UNKNOWN_SUBSCRIPTION_ID", false, "The telemetry subscription id is not known."},
	TelemetryTooLarge + 1:                  {"TELEMETRY_TOO_LARGE", false, "The telemetry payload is too large."},
	InvalidRegistration + 1:                {"INVALID_REGISTRATION", false, "The registration is invalid."},
	TransactionAbortable + 1:               {"TRANSACTION_ABORTABLE", false, "The transaction must be aborted."},
	InvalidRecordState + 1:                 {"INVALID_RECORD_STATE", false, "The record state is invalid. The acknowledgement of delivery could not be completed."},
	ShareSessionNotFound + 1:               {"SHARE_SESSION_NOT_FOUND", false, "The share session was not found."},
	InvalidShareSessionEpoch + 1:           {"INVALID_SHARE_SESSION_EPOCH", false, "The share session epoch is invalid."},
}

func (c Code) info() (info, bool) {
	i := int(c) + 1
	if i < 0 || i >= len(codes) {
		return info{}, false
	}
	return codes[i], true
}

// Known reports whether c is a code this package has a name for.
func (c Code) Known() bool {
	_, ok := c.info()
	return ok
}

// String is the code's protocol name, for example "UNKNOWN_TOPIC_OR_PARTITION",
// or "UNKNOWN_ERROR_CODE_<n>" for a code this package does not know.
func (c Code) String() string {
	if in, ok := c.info(); ok {
		return in.name
	}
	return "UNKNOWN_ERROR_CODE_" + strconv.Itoa(int(c))
}

// Retriable reports whether Kafka clients retry a request that failed with
// c. Unknown codes are not retriable.
func (c Code) Retriable() bool {
	in, _ := c.info()
	return in.retriable
}

// Message is the default human-readable message for c, for responses that
// carry an ErrorMessage next to the code. It is "" for None.
func (c Code) Message() string {
	if in, ok := c.info(); ok {
		return in.message
	}
	return "Unknown error code " + strconv.Itoa(int(c)) + "."
}

// Error makes Code an error, so broker code can return a Kafka code through
// ordinary error paths (and wrap it with %w). None is not meant to be
// returned as an error. Note that fmt's %v prints an error through Error,
// so "kerr: NAME"; use %d for the number.
func (c Code) Error() string {
	return "kerr: " + c.String()
}

// Int16 is c as the protocol's int16, for assignment to kmsg ErrorCode
// fields.
func (c Code) Int16() int16 { return int16(c) }

// CodeOf returns the Kafka code for err: None for a nil error, the Code
// wrapped in err's chain when there is one, else UnknownServerError. It is
// the one place where Go errors become what a client sees.
func CodeOf(err error) Code {
	if err == nil {
		return None
	}
	var c Code
	if errors.As(err, &c) {
		return c
	}
	return UnknownServerError
}

// Nullable returns c's default message as a pointer, or nil for None: the
// shape of the nullable ErrorMessage fields in kmsg responses.
func (c Code) Nullable() *string {
	if c == None {
		return nil
	}
	m := c.Message()
	return &m
}
