package api

import (
	"slices"

	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/fetch"
	"github.com/samsa-io/samsa/actors/sasl"
	"github.com/samsa-io/samsa/actors/sharegroup"
	"github.com/samsa-io/samsa/actors/txn"
	"github.com/samsa-io/samsa/wire"
)

// API is one Kafka API the broker serves: its key and how a request of
// it is handled. The versions served are wire.APIs' row for the key (the
// decoder accepts only those); TestRegistryMatchesWireTable keeps the two
// tables in step.
type API struct {
	Key kmsg.Key
	// Handle serves a request on the gnet loop that decoded it: it
	// answers at once or hands the request to the actor that owns it,
	// and never blocks.
	Handle func(s *Services, req *wire.Request)
}

// Services is what handlers reach: the shared environment and the actors
// and services requests go to.
type Services struct {
	Env    *env.Env
	Meta   *actor.PID // the metadata actor (actors/catalog)
	Fetch  *fetch.Service
	Groups *coordinator.Coordinators
	// Txns are the transaction coordinators; nil when the broker does
	// not serve transactions (a transactional producer is then refused).
	Txns *txn.Coordinators
	// Controller serves the requests addressed to the controller
	// (ControlledShutdown, AlterPartition, AllocateProducerIds) in
	// cluster mode; nil answers NOT_CONTROLLER.
	Controller func(req *wire.Request)
	// SASL authenticates the clients of SASL listeners and holds the
	// SCRAM credentials; nil when no listener uses SASL.
	SASL *sasl.Service
	// Shares is the share-group coordinator (KIP-932).
	Shares *sharegroup.Service
}

// All lists every API the broker serves, one entry per API; each entry is
// declared in the API's own file.
func All() []API {
	return append([]API{
		apiVersions,
		metadataAPI, createTopics, deleteTopics, createPartitions,
		describeConfigs, alterConfigs, incrementalAlterConfigs,
		describeCluster, describeLogDirs, initProducerID,
		produce, fetchAPI, listOffsets, deleteRecords, offsetForLeaderEpoch,
		findCoordinator, describeProducers,
		saslHandshake, saslAuthenticate, describeUserScramCredentials, alterUserScramCredentials, describeClientQuotas, alterClientQuotas,
	}, slices.Concat(groupAPIs, interBrokerAPIs, transactionAPIs, aclAPIs, shareAPIs)...)
}

// ByKey indexes All by API key.
func ByKey() map[int16]API {
	m := make(map[int16]API)
	for _, a := range All() {
		m[int16(a.Key)] = a
	}
	return m
}

// toMetadata hands a request to the metadata actor, which serves it by
// its body's type (actors/catalog). A handler that panics after
// answering must not answer twice (netloop's contract is exactly once);
// admin requests are rare enough to afford the guard.
func toMetadata(s *Services, req *wire.Request) {
	reply, once := req.Reply, new(atomic.Bool)
	req.Reply = func(r *wire.Response) {
		if once.CompareAndSwap(false, true) {
			reply(r)
		}
	}
	s.Env.Send(s.Meta, &catalog.AdminRequest{Req: req})
}
