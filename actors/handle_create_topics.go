package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// handleCreateTopics serves CreateTopics (v0-7). The answer goes out once
// the topics are persisted and every new partition actor has opened its
// log, so the client can use the topic at once.
func (a *metadataActor) handleCreateTopics(req *wire.Request) {
	body := req.Body.(*kmsg.CreateTopicsRequest)
	resp, eff := a.state.CreateTopics(body, a.now())
	if !body.ValidateOnly {
		for _, t := range resp.Topics {
			if t.ErrorCode == 0 {
				a.b.log.Info("topic created", "topic", t.Topic, "partitions", t.NumPartitions, "client", req.ClientAddr)
			}
		}
	}
	a.apply(eff, func() { reply(req, resp) })
}
