package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire"
)

// handleMetadata answers Metadata (v0-12): brokers (this one, at its
// advertised address), cluster id, controller (this broker), and the
// requested topics, auto-creating unknown ones when
// auto.create.topics.enable and the request's allow_auto_topic_creation
// (v4+) both say so.
func (a *metadataActor) handleMetadata(req *wire.Request) {
	resp, eff := a.state.Metadata(req.Body.(*kmsg.MetadataRequest), a.now())
	for _, t := range resp.Topics {
		if t.ErrorCode == 0 && t.Topic != nil && a.startsTopic(eff.Start, *t.Topic) {
			a.b.log.Info("topic auto-created", "topic", *t.Topic, "partitions", len(t.Partitions), "client", req.ClientAddr)
		}
	}
	a.apply(eff, func() { reply(req, resp) })
}

func (a *metadataActor) startsTopic(specs []metadata.PartitionSpec, name string) bool {
	for _, s := range specs {
		if s.Topic == name {
			return true
		}
	}
	return false
}
