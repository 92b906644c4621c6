package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// DescribeUserScramCredentials (v0), answered on the loop from the
// credential store (actors/sasl): which users have SCRAM credentials,
// with which mechanisms and iterations.
var describeUserScramCredentials = API{Key: kmsg.DescribeUserSCRAMCredentials, Handle: func(s *Services, req *wire.Request) {
	env.Reply(req, s.SASL.Store.Describe(req.Body.(*kmsg.DescribeUserSCRAMCredentialsRequest)))
}}

// AlterUserScramCredentials (v0): checked on the loop, then persisted
// (fsync, or a ZooKeeper write in a cluster) off it; the answer waits
// for the credentials to be durable, and they serve logins from then on.
var alterUserScramCredentials = API{Key: kmsg.AlterUserSCRAMCredentials, Handle: handleAlterUserScramCredentials}

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
