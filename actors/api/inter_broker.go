package api

import (
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The inter-broker APIs of ZooKeeper mode (decoded only in cluster mode,
// wire.EnableInterBrokerAPIs). The controller's requests to this broker
// (LeaderAndIsr, StopReplica, UpdateMetadata) go to the metadata actor,
// which owns the partitions and the cluster view; requests to the
// controller (ControlledShutdown, AlterPartition, AllocateProducerIds)
// go to this broker's controller, which answers NOT_CONTROLLER unless it
// is the elected one.
var (
	leaderAndIsr        = API{Key: kmsg.LeaderAndISR, Handle: gated(gateClusterOp(acl.OpClusterAction), toInterBroker)}
	stopReplica         = API{Key: kmsg.StopReplica, Handle: gated(gateClusterOp(acl.OpClusterAction), toInterBroker)}
	updateMetadata      = API{Key: kmsg.UpdateMetadata, Handle: gated(gateClusterOp(acl.OpClusterAction), toInterBroker)}
	controlledShutdown  = API{Key: kmsg.ControlledShutdown, Handle: gated(gateClusterOp(acl.OpClusterAction), toController)}
	alterPartition      = API{Key: kmsg.AlterPartition, Handle: gated(gateClusterOp(acl.OpClusterAction), toController)}
	allocateProducerIDs = API{Key: kmsg.AllocateProducerIDs, Handle: gated(gateClusterOp(acl.OpClusterAction), toController)}
)

var interBrokerAPIs = []API{leaderAndIsr, stopReplica, updateMetadata, controlledShutdown, alterPartition, allocateProducerIDs,
	electLeaders}

func toInterBroker(s *Services, req *wire.Request) {
	reply, once := req.Reply, new(atomic.Bool)
	req.Reply = func(r *wire.Response) {
		if once.CompareAndSwap(false, true) {
			reply(r)
		}
	}
	s.Env.Send(s.Meta, &catalog.InterBrokerRequest{Req: req})
}

func toController(s *Services, req *wire.Request) {
	if s.Controller == nil {
		env.Reply(req, NotController(req))
		return
	}
	s.Controller(req)
}

// NotController is the answer of a broker that is not the controller.
func NotController(req *wire.Request) kmsg.Response {
	if el, ok := req.Body.(*kmsg.ElectLeadersRequest); ok {
		return electLeadersNotController(el)
	}
	resp := req.Body.ResponseKind()
	code := kerr.NotController.Int16()
	switch r := resp.(type) {
	case *kmsg.ControlledShutdownResponse:
		r.ErrorCode = code
	case *kmsg.AlterPartitionResponse:
		r.ErrorCode = code
	case *kmsg.AllocateProducerIDsResponse:
		r.ErrorCode = code
	case *kmsg.AlterPartitionAssignmentsResponse:
		r.ErrorCode = code
	case *kmsg.ListPartitionReassignmentsResponse:
		r.ErrorCode = code
	}
	return resp
}
