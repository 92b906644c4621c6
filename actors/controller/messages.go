package controller

import "github.com/twmb/franz-go/pkg/kmsg"

// Messages the controller actor accepts from the rest of the broker.
type (
	// AlterPartition is a leader's AlterPartition (56) forwarded by the
	// API layer. Reply is called once, from the actor's goroutine.
	AlterPartition struct {
		Req   *kmsg.AlterPartitionRequest
		Reply func(kmsg.Response)
	}
	// ControlledShutdown is a broker's ControlledShutdown (7).
	ControlledShutdown struct {
		Req   *kmsg.ControlledShutdownRequest
		Reply func(kmsg.Response)
	}
	// AllocateProducerIDs is a broker's AllocateProducerIds (67).
	AllocateProducerIDs struct {
		Req   *kmsg.AllocateProducerIDsRequest
		Reply func(kmsg.Response)
	}
	// ElectLeaders is an admin's ElectLeaders (43): preferred or unclean
	// leader election.
	ElectLeaders struct {
		Req   *kmsg.ElectLeadersRequest
		Reply func(kmsg.Response)
	}
	// UncleanEnabled says unclean.leader.election.enable was turned on
	// for Topic ("" : the broker's default): leaderless partitions may
	// now elect.
	UncleanEnabled struct{ Topic string }
	// SessionExpired says the ZooKeeper session is gone (zkmeta's
	// Expired event): the controller steps down at once.
	SessionExpired struct{}
	// SessionRestored says a new session exists (zkmeta's NewSession):
	// campaign again.
	SessionRestored struct{}
)

// Internal messages: watches firing and answers arriving, each stamped
// with the term (gen) it belongs to so that one from before a step-down
// is ignored.
type (
	controllerChanged struct{ gen uint64 }
	brokersChanged    struct{ gen uint64 }
	topicsChanged     struct{ gen uint64 }
	assignmentChanged struct {
		gen   uint64
		topic string
	}
	deletionsChanged  struct{ gen uint64 }
	stopReplicaAnswer struct {
		gen    uint64
		broker int32
		req    *kmsg.StopReplicaRequest
		resp   *kmsg.StopReplicaResponse
	}
	retryCampaign struct{}
	// balanceCheck is the auto.leader.rebalance.enable timer firing.
	balanceCheck struct{ gen uint64 }
)

// Partition reassignment (reassign.go).
type (
	// AlterPartitionReassignments is a client's AlterPartitionReassignments
	// (45) forwarded by the API layer.
	AlterPartitionReassignments struct {
		Req   *kmsg.AlterPartitionAssignmentsRequest
		Reply func(kmsg.Response)
	}
	// ListPartitionReassignments is a client's ListPartitionReassignments
	// (46).
	ListPartitionReassignments struct {
		Req   *kmsg.ListPartitionReassignmentsRequest
		Reply func(kmsg.Response)
	}
	reassignZnodeChanged struct{ gen uint64 }
)
