package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// handleInitProducerID gives an idempotent producer a new producer id at
// epoch 0 (also when a v3+ client sends its old id and epoch to bump it:
// Kafka hands idempotent producers a fresh id then too). It runs in the
// metadata actor because a new block of ids is persisted to disk.
//
// Transactions are not implemented: a transactional id is answered
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which every client treats as
// fatal and non-retriable, so a transactional producer fails at once with
// a clear error instead of retrying until a timeout (the broker logs why).
func (a *metadataActor) handleInitProducerID(req *wire.Request) {
	body := req.Body.(*kmsg.InitProducerIDRequest)
	resp := body.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if body.TransactionalID != nil {
		a.b.log.Warn("transactional producer refused: transactions are not implemented yet",
			"transactional_id", *body.TransactionalID, "client", req.ClientAddr, "client_id", req.Header.ClientID)
		resp.ErrorCode = int16(kerr.TransactionalIDAuthorizationFailed)
		reply(req, resp)
		return
	}
	id, err := a.b.producerIDs.allocate(a.b.cfg.LogDirs)
	if err != nil {
		a.b.log.Error("cannot allocate producer ids", "err", err)
		resp.ErrorCode = int16(kerr.CoordinatorNotAvailable)
		reply(req, resp)
		return
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	reply(req, resp)
}
