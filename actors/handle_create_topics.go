package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// handleCreateTopics serves CreateTopics (v2-7). The answer goes out once
// the topics are persisted and their partition actors spawned; each actor
// opens its log before it handles anything sent to it later.
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
	a.apply(eff, nil)
	reply(req, resp)
}
