package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// InitProducerId (v0-4): a new producer id at epoch 0 for an idempotent
// producer, from blocks persisted in every data directory, served by the
// metadata actor, which persists the blocks; with a transactional id, the
// id's transaction coordinator answers (when the broker serves
// transactions; else the metadata actor refuses it).
var initProducerID = API{Key: kmsg.InitProducerID, Handle: gated(gateInitProducerID, handleInitProducerID)}

func handleInitProducerID(s *Services, req *wire.Request) {
	if body := req.Body.(*kmsg.InitProducerIDRequest); body.TransactionalID != nil && s.Txns != nil {
		initTransactionalProducer(s, req, body)
		return
	}
	toMetadata(s, req)
}
