package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// handleDescribeCluster serves DescribeCluster (v0-1): cluster id, this
// broker at its advertised address, and this broker as controller.
func (a *metadataActor) handleDescribeCluster(req *wire.Request) {
	reply(req, a.state.DescribeCluster(req.Body.(*kmsg.DescribeClusterRequest)))
}
