package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// AlterClientQuotas (v0-1): checked and persisted off the loop (a file
// write with fsync on a single node), answered once the change is
// durable; it is enforced from then on. validate_only checks and changes
// nothing. It needs ALTER_CONFIGS on the cluster, as in Kafka: without
// it every entry is answered CLUSTER_AUTHORIZATION_FAILED.
var alterClientQuotas = API{Key: kmsg.AlterClientQuotas, Handle: gated(gateAlterClientQuotas, handleAlterClientQuotas)}

func gateAlterClientQuotas(s *Services, req *wire.Request) bool {
	if clusterAuthorized(s, req, acl.OpAlterConfigs) {
		return false
	}
	body := req.Body.(*kmsg.AlterClientQuotasRequest)
	resp := body.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	resp.Version = body.Version
	for _, en := range body.Entries {
		out := quota.ResponseEntry(en)
		out.ErrorCode = kerr.ClusterAuthorizationFailed.Int16()
		resp.Entries = append(resp.Entries, out)
	}
	env.Reply(req, resp)
	return true
}

func handleAlterClientQuotas(s *Services, req *wire.Request) {
	go func() {
		resp, err := s.Env.Quotas.Alter(req.Body.(*kmsg.AlterClientQuotasRequest))
		if err != nil {
			s.Env.Log.Error("cannot store client quotas", "client", req.ClientAddr, "err", err)
			for i := range resp.Entries {
				if resp.Entries[i].ErrorCode == 0 {
					resp.Entries[i].ErrorCode = kerr.UnknownServerError.Int16()
					resp.Entries[i].ErrorMessage = kmsg.StringPtr("The quotas could not be stored: " + err.Error())
				}
			}
		}
		env.Reply(req, resp)
	}()
}
