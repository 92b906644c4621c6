package catalog

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// A single broker answers Metadata and DescribeCluster with its address
// on the listener the request came in on (env.ClientEndpoint), as Kafka
// does; the state knows one address, the first listener's.

func (a *metadataActor) metadataAtListener(req *wire.Request, resp *kmsg.MetadataResponse) {
	a.selfAtListener(req, len(resp.Brokers), func(i int) (int32, *string, *int32) {
		b := &resp.Brokers[i]
		return b.NodeID, &b.Host, &b.Port
	})
}

func (a *metadataActor) describeClusterAtListener(req *wire.Request, resp *kmsg.DescribeClusterResponse) {
	a.selfAtListener(req, len(resp.Brokers), func(i int) (int32, *string, *int32) {
		b := &resp.Brokers[i]
		return b.NodeID, &b.Host, &b.Port
	})
}

// selfAtListener sets this broker's host and port among n brokers, the
// i-th of which broker(i) gives (its id and where its address is).
func (a *metadataActor) selfAtListener(req *wire.Request, n int, broker func(i int) (int32, *string, *int32)) {
	ep, ok := a.env.ClientEndpoint(req.Session)
	if !ok {
		return
	}
	for i := range n {
		if id, host, port := broker(i); id == a.env.BrokerID() {
			*host, *port = ep.Host, ep.Port
		}
	}
}
