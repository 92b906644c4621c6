package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// Fetch (v4-13) is served by the fetch service (actors/fetch): sessions,
// reads from the partition actors or their views, long polling.
var fetchAPI = API{Key: kmsg.Fetch, Handle: func(s *Services, req *wire.Request) { s.Fetch.Handle(req) }}
