package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Coordinator key types (FindCoordinator's KeyType).
const (
	coordinatorKeyGroup       = 0
	coordinatorKeyTransaction = 1
)

var findCoordinator = API{Key: kmsg.FindCoordinator, Handle: handleFindCoordinator}

// handleFindCoordinator serves FindCoordinator v0-6 on the loop. A group's
// coordinator is the leader of __consumer_offsets partition
// PartitionFor(group): in single-node mode this broker, once the topic
// exists. Transactions have no coordinator yet: COORDINATOR_NOT_AVAILABLE
// with a message saying so (clients retry, then report it).
func handleFindCoordinator(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.FindCoordinatorRequest)
	if body.CoordinatorType == coordinatorKeyGroup && s.Groups.PIDs() == nil {
		// The first group request of a broker creates __consumer_offsets:
		// answer when it is ready (a few milliseconds) rather than send
		// the client into its retry backoff.
		s.Groups.WhenStarted(func(bool) { answerFindCoordinator(s, req, body) })
		return
	}
	answerFindCoordinator(s, req, body)
}

func answerFindCoordinator(s *Services, req *wire.Request, body *kmsg.FindCoordinatorRequest) {
	resp := body.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.Version = body.Version
	keys := body.CoordinatorKeys
	if body.Version < 4 {
		keys = []string{body.CoordinatorKey}
	}
	ep := s.Env.Endpoint.Load()
	for _, key := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Port = key, -1, -1
		var msg string
		switch body.CoordinatorType {
		case coordinatorKeyGroup:
			if _, ok := s.Groups.Of(key); !ok || ep == nil {
				c.ErrorCode, msg = kerr.CoordinatorNotAvailable.Int16(), "the group coordinator could not start; see the broker log"
				break
			}
			c.NodeID, c.Host, c.Port = s.Env.BrokerID(), ep.Host, ep.Port
		case coordinatorKeyTransaction:
			c.ErrorCode, msg = kerr.CoordinatorNotAvailable.Int16(), "transactions are not supported by this broker yet"
		default:
			c.ErrorCode, msg = kerr.InvalidRequest.Int16(), "unknown coordinator key type"
		}
		if msg != "" {
			c.ErrorMessage = &msg
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if body.Version < 4 {
		c := resp.Coordinators[0]
		resp.Coordinators = nil
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.ErrorMessage, c.NodeID, c.Host, c.Port
	}
	env.Reply(req, resp)
}
