package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// handleAlterConfigs serves the legacy AlterConfigs (v0-2): a resource's
// dynamic configs are replaced as a whole, validated, persisted, then
// applied to the running logs.
func (a *metadataActor) handleAlterConfigs(req *wire.Request) {
	resp, eff := a.state.AlterConfigs(req.Body.(*kmsg.AlterConfigsRequest))
	a.logReconfigured(eff, req)
	a.apply(eff, nil)
	reply(req, resp)
}
