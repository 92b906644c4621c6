package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// DescribeClientQuotas (v0-1): the entities the filter matches, with
// their quotas (actors/quota). Alone it is answered on the loop from the
// quota configs; in a cluster from ZooKeeper, on a goroutine, as Kafka's
// ZooKeeper mode reads them, so a change made through another broker
// shows at once. Kafka's kafka-configs.sh asks it before the SCRAM
// credentials when it describes users (--describe --entity-type users).
// It needs DESCRIBE_CONFIGS on the cluster, as in Kafka.
var describeClientQuotas = API{Key: kmsg.DescribeClientQuotas, Handle: gated(gateClusterOp(acl.OpDescribeConfigs), handleDescribeClientQuotas)}

func handleDescribeClientQuotas(s *Services, req *wire.Request) {
	q, body := s.Env.Quotas, req.Body.(*kmsg.DescribeClientQuotasRequest)
	if !q.ReadsThrough() {
		env.Reply(req, quota.Describe(q.Snapshot(), body))
		return
	}
	go func() {
		configs, err := q.Current()
		if err != nil {
			s.Env.Log.Warn("cannot read the client quotas from ZooKeeper", "client", req.ClientAddr, "err", err)
			resp := body.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
			resp.Version = body.Version
			resp.ErrorCode, resp.ErrorMessage = kerr.UnknownServerError.Int16(), kmsg.StringPtr("The client quotas could not be read: "+err.Error())
			env.Reply(req, resp)
			return
		}
		env.Reply(req, quota.Describe(configs, body))
	}()
}
