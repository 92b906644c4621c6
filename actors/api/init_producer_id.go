package api

import "github.com/twmb/franz-go/pkg/kmsg"

// InitProducerId (v0-4): a new producer id at epoch 0 for an idempotent
// producer, from blocks persisted in every data directory. Served by the
// metadata actor, which persists the blocks.
var initProducerID = API{Key: kmsg.InitProducerID, Handle: toMetadata}
