package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
)

// AlterPartitionReassignments (45) and ListPartitionReassignments (46),
// KIP-455: served by the controller (actors/controller's reassign.go), as
// Kafka 3.9's ZooKeeper-mode brokers hand them to their KafkaController.
// A broker that is not the controller answers NOT_CONTROLLER, and the
// admin client finds the controller and asks again. Cluster mode only:
// they join the inter-broker APIs (wire.InterBrokerAPIs), which a broker
// alone neither serves nor advertises.
var (
	alterPartitionReassignments = API{Key: kmsg.AlterPartitionAssignments, Handle: gated(gateClusterOp(acl.OpAlter), toController)}
	listPartitionReassignments  = API{Key: kmsg.ListPartitionReassignments, Handle: gated(gateClusterOp(acl.OpDescribe), toController)}
)

func init() {
	interBrokerAPIs = append(interBrokerAPIs, alterPartitionReassignments, listPartitionReassignments)
}
