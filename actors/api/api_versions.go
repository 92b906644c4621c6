package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
)

// ApiVersions (v0-4) is answered on the loop: the answer is the wire
// package's API table, which needs no state.
var apiVersions = API{Key: kmsg.ApiVersions, Handle: func(_ *Services, req *wire.Request) {
	env.Reply(req, wire.HandleApiVersions(req))
}}
