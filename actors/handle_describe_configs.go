package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// handleDescribeConfigs serves DescribeConfigs (v1-4) for topics and this
// broker from the config registry: values, sources, read-only flags,
// synonyms (when asked), types (v3+) and documentation (when asked).
func (a *metadataActor) handleDescribeConfigs(req *wire.Request) {
	reply(req, a.state.DescribeConfigs(req.Body.(*kmsg.DescribeConfigsRequest)))
}
