package acl

import "strings"

// ResourceType is Kafka's resource type, with its protocol code.
type ResourceType int8

// Kafka's ResourceType codes.
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// PatternType is how a resource name is matched, with its protocol code.
type PatternType int8

// Kafka's PatternType codes. ANY and MATCH appear only in filters.
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Operation is an ACL operation, with its protocol code.
type Operation int8

// Kafka's AclOperation codes.
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

// Permission is ALLOW or DENY, with its protocol code.
type Permission int8

// Kafka's AclPermissionType codes.
const (
	PermUnknown Permission = 0
	PermAny     Permission = 1
	PermDeny    Permission = 2
	PermAllow   Permission = 3
)

// ClusterName is the one name of the CLUSTER resource.
const ClusterName = "kafka-cluster"

// Wildcard is the literal resource name, principal and host that match
// every name, principal and host.
const Wildcard = "*"

// WildcardPrincipal is the principal of an entry that applies to every
// user.
const WildcardPrincipal = "User:*"

// resourceNames are the resource types' names in ZooKeeper paths and
// change notifications (Kafka's ResourceType.name in Pascal case).
var resourceNames = map[ResourceType]string{
	ResourceTopic:           "Topic",
	ResourceGroup:           "Group",
	ResourceCluster:         "Cluster",
	ResourceTransactionalID: "TransactionalId",
	ResourceDelegationToken: "DelegationToken",
	ResourceUser:            "User",
}

// operationNames are the operations' names in ZooKeeper's JSON.
var operationNames = map[Operation]string{
	OpAll: "All", OpRead: "Read", OpWrite: "Write", OpCreate: "Create", OpDelete: "Delete",
	OpAlter: "Alter", OpDescribe: "Describe", OpClusterAction: "ClusterAction",
	OpDescribeConfigs: "DescribeConfigs", OpAlterConfigs: "AlterConfigs",
	OpIdempotentWrite: "IdempotentWrite", OpCreateTokens: "CreateTokens", OpDescribeTokens: "DescribeTokens",
}

// String is the type's name as ZooKeeper paths spell it ("Topic").
func (t ResourceType) String() string {
	if n, ok := resourceNames[t]; ok {
		return n
	}
	return "Unknown"
}

// ParseResourceType reads a name as ZooKeeper paths spell it.
func ParseResourceType(s string) (ResourceType, bool) {
	for t, n := range resourceNames {
		if strings.EqualFold(n, s) {
			return t, true
		}
	}
	return ResourceUnknown, false
}

// String is the operation's name as ZooKeeper's JSON spells it ("Read").
func (o Operation) String() string {
	if n, ok := operationNames[o]; ok {
		return n
	}
	return "Unknown"
}

// ParseOperation reads an operation's name, in any case, with or
// without underscores ("DescribeConfigs", "DESCRIBE_CONFIGS").
func ParseOperation(s string) (Operation, bool) {
	s = strings.ReplaceAll(s, "_", "")
	for o, n := range operationNames {
		if strings.EqualFold(n, s) {
			return o, true
		}
	}
	return OpUnknown, false
}

// String is "Allow" or "Deny", as ZooKeeper's JSON spells them.
func (p Permission) String() string {
	switch p {
	case PermAllow:
		return "Allow"
	case PermDeny:
		return "Deny"
	}
	return "Unknown"
}

// ParsePermission reads "Allow" or "Deny" in any case.
func ParsePermission(s string) (Permission, bool) {
	switch {
	case strings.EqualFold(s, "Allow"):
		return PermAllow, true
	case strings.EqualFold(s, "Deny"):
		return PermDeny, true
	}
	return PermUnknown, false
}

// concrete reports whether t names one resource type (not UNKNOWN or
// ANY).
func (t ResourceType) concrete() bool { return t >= ResourceTopic && t <= ResourceUser }

// concrete reports whether o is an operation an entry can grant.
func (o Operation) concrete() bool { return o >= OpAll && o <= OpDescribeTokens }
