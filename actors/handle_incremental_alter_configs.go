package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire"
)

// handleIncrementalAlterConfigs serves IncrementalAlterConfigs (v0-1):
// SET, DELETE, APPEND and SUBTRACT, validated, persisted, and applied
// live to every partition the change reaches (one topic, or all of them
// for a broker-level default).
func (a *metadataActor) handleIncrementalAlterConfigs(req *wire.Request) {
	resp, eff := a.state.IncrementalAlterConfigs(req.Body.(*kmsg.IncrementalAlterConfigsRequest))
	a.logReconfigured(eff, req)
	a.apply(eff, nil)
	reply(req, resp)
}

func (a *metadataActor) logReconfigured(eff metadata.Effects, req *wire.Request) {
	if len(eff.Reconfigure) > 0 {
		a.b.log.Info("configs changed", "topics_reconfigured", len(eff.Reconfigure), "client", req.ClientAddr)
	}
}
