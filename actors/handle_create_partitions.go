package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// handleCreatePartitions serves CreatePartitions (v0-3): partitions are
// only ever added, and each new one gets its actor and log.
func (a *metadataActor) handleCreatePartitions(req *wire.Request) {
	body := req.Body.(*kmsg.CreatePartitionsRequest)
	resp, eff := a.state.CreatePartitions(body)
	for _, t := range resp.Topics {
		if t.ErrorCode == 0 && !body.ValidateOnly {
			a.b.log.Info("partitions added", "topic", t.Topic, "client", req.ClientAddr)
		}
	}
	a.apply(eff, func() { reply(req, resp) })
}
