package metadata

// Authorized operations (KIP-430): Metadata v8+ and DescribeCluster answer,
// when the request asks for them, the operations the client may perform on
// each topic and on the cluster as a bitfield, bit n set for AclOperation
// code n (Kafka's Utils.to32BitField). Not asked, the field is
// authorizedOperationsUnset.
//
// samsa has no authorizer yet, so, like Kafka without one, every operation
// a resource type supports is allowed. authorizedOperations is the one place
// an authorizer will answer from.

// authorizedOperationsUnset is Kafka's "not requested" value for
// AuthorizedOperations fields (INT32_MIN).
const authorizedOperationsUnset int32 = -2147483648

// resourceType is a Kafka ACL resource type (Kafka's ResourceType codes).
type resourceType int8

// The resource types authorized operations are reported for.
const (
	resourceTopic   resourceType = 2
	resourceGroup   resourceType = 3
	resourceCluster resourceType = 4
)

// AclOperation codes (Kafka's AclOperation).
const (
	opRead            = 3
	opWrite           = 4
	opCreate          = 5
	opDelete          = 6
	opAlter           = 7
	opDescribe        = 8
	opClusterAction   = 9
	opDescribeConfigs = 10
	opAlterConfigs    = 11
	opIdempotentWrite = 12
)

// supportedOperations are the operations each resource type supports
// (Kafka's AclEntry.supportedOperations).
var supportedOperations = map[resourceType][]int{
	resourceTopic:   {opRead, opWrite, opCreate, opDescribe, opDelete, opAlter, opDescribeConfigs, opAlterConfigs},
	resourceGroup:   {opRead, opDescribe, opDelete, opDescribeConfigs, opAlterConfigs},
	resourceCluster: {opCreate, opClusterAction, opDescribeConfigs, opAlterConfigs, opIdempotentWrite, opAlter, opDescribe},
}

// authorizedOperations is the bitfield of the operations the client may
// perform on a resource of type typ: with no authorizer, all it supports.
func authorizedOperations(typ resourceType) int32 {
	var bits int32
	for _, op := range supportedOperations[typ] {
		bits |= 1 << op
	}
	return bits
}

// AuthorizedOperationsUnset is the value of an AuthorizedOperations field
// the request did not ask for.
const AuthorizedOperationsUnset = authorizedOperationsUnset

// TopicOperations and ClusterOperations are the authorized-operations
// bitfields of a topic and of the cluster, for the cluster-mode answers
// (actors/cluster) that are built outside this package.
func TopicOperations() int32 { return authorizedOperations(resourceTopic) }

// ClusterOperations: see TopicOperations.
func ClusterOperations() int32 { return authorizedOperations(resourceCluster) }
