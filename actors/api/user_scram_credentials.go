package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// DescribeUserScramCredentials (v0), answered on the loop from the
// credential store (actors/sasl): which users have SCRAM credentials,
// with which mechanisms and iterations.
// It needs DESCRIBE on the cluster, as in Kafka.
var describeUserScramCredentials = API{Key: kmsg.DescribeUserSCRAMCredentials, Handle: gated(gateClusterOp(acl.OpDescribe),
	func(s *Services, req *wire.Request) {
		env.Reply(req, s.SASL.Store.Describe(req.Body.(*kmsg.DescribeUserSCRAMCredentialsRequest)))
	})}

// AlterUserScramCredentials (v0): checked on the loop, then persisted
// (fsync, or a ZooKeeper write in a cluster) off it; the answer waits
// for the credentials to be durable, and they serve logins from then on.
// It needs ALTER on the cluster, as in Kafka: without it every user is
// answered CLUSTER_AUTHORIZATION_FAILED.
var alterUserScramCredentials = API{Key: kmsg.AlterUserSCRAMCredentials, Handle: gated(gateAlterUserScram, handleAlterUserScramCredentials)}

func gateAlterUserScram(s *Services, req *wire.Request) bool {
	if clusterAuthorized(s, req, acl.OpAlter) {
		return false
	}
	body := req.Body.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := body.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	resp.Version = body.Version
	seen := map[string]bool{}
	add := func(user string) {
		if !seen[user] {
			seen[user] = true
			resp.Results = append(resp.Results, kmsg.AlterUserSCRAMCredentialsResponseResult{User: user, ErrorCode: kerr.ClusterAuthorizationFailed.Int16()})
		}
	}
	for _, d := range body.Deletions {
		add(d.Name)
	}
	for _, u := range body.Upsertions {
		add(u.Name)
	}
	env.Reply(req, resp)
	return true
}

func handleAlterUserScramCredentials(s *Services, req *wire.Request) {
	store := s.SASL.Store
	changes, resp := store.PlanAlter(req.Body.(*kmsg.AlterUserSCRAMCredentialsRequest))
	if len(changes) == 0 {
		env.Reply(req, resp)
		return
	}
	go func() {
		if err := store.Alter(changes); err != nil {
			s.Env.Log.Error("cannot store SCRAM credentials", "client", req.ClientAddr, "err", err)
			for i := range resp.Results {
				if resp.Results[i].ErrorCode == 0 {
					resp.Results[i].ErrorCode = kerr.UnknownServerError.Int16()
					resp.Results[i].ErrorMessage = kmsg.StringPtr("The credentials could not be stored; see the broker log")
				}
			}
		}
		env.Reply(req, resp)
	}()
}
