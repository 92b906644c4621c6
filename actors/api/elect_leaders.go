package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/controller"
)

// ElectLeaders (43) asks for preferred or unclean leader elections
// (Admin.electLeaders, kafka-leader-election.sh). Clients send it to the
// controller; it goes to this broker's controller like AlterPartition,
// and a broker that is not the controller answers NOT_CONTROLLER per
// partition (controller.ElectLeadersNotController). Cluster mode only
// (wire.InterBrokerAPIs): a single broker has no replicas to elect.
var electLeaders = API{Key: kmsg.ElectLeaders, Handle: gated(gateClusterOp(acl.OpAlter), toController)}

func electLeadersNotController(req *kmsg.ElectLeadersRequest) kmsg.Response {
	return controller.ElectLeadersNotController(req)
}
