package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/wire"
)

// DescribeClientQuotas (v0-1), answered on the loop from the quota
// configs (actors/quota): the entities the filter matches, with their
// quotas. Kafka's kafka-configs.sh asks it before the SCRAM credentials
// when it describes users (--describe --entity-type users).
// It needs DESCRIBE_CONFIGS on the cluster, as in Kafka.
var describeClientQuotas = API{Key: kmsg.DescribeClientQuotas, Handle: gated(gateClusterOp(acl.OpDescribeConfigs), func(s *Services, req *wire.Request) {
	env.Reply(req, quota.Describe(s.Env.Quotas.Snapshot(), req.Body.(*kmsg.DescribeClientQuotasRequest)))
})}
