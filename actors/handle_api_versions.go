package actors

import "github.com/samsa-io/samsa/wire"

// handleApiVersions answers ApiVersions (v0-4) on the loop: the answer is
// the wire package's API table, which needs no state.
func handleApiVersions(_ *Broker, req *wire.Request) {
	reply(req, wire.HandleApiVersions(req))
}
