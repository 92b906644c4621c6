package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// DescribeClientQuotas (v0-1), answered on the loop: samsa enforces no
// client quotas, so every well-formed question is answered with none.
// Kafka's kafka-configs.sh asks it before the SCRAM credentials when it
// describes users (--describe --entity-type users).
// It needs DESCRIBE_CONFIGS on the cluster, as in Kafka.
var describeClientQuotas = API{Key: kmsg.DescribeClientQuotas, Handle: gated(gateClusterOp(acl.OpDescribeConfigs), describeNoQuotas)}

func describeNoQuotas(_ *Services, req *wire.Request) {
	body := req.Body.(*kmsg.DescribeClientQuotasRequest)
	resp := body.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	resp.Version = body.Version
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, c := range body.Components {
		switch c.EntityType {
		case "user", "client-id", "ip":
		default:
			resp.ErrorCode = kerr.InvalidRequest.Int16()
			resp.ErrorMessage = kmsg.StringPtr("Unexpected quota entity type " + c.EntityType)
			resp.Entries = nil
		}
	}
	env.Reply(req, resp)
}
