package actors

import (
	"testing"

	"github.com/samsa-io/samsa/wire"
)

// TestEveryAdvertisedAPIHasARoute keeps the dispatch table and the wire
// API table in step: an API the broker advertises but does not route
// would leave its clients waiting.
func TestEveryAdvertisedAPIHasARoute(t *testing.T) {
	for _, a := range wire.APIs {
		r, ok := routesByKey[a.Key]
		if !ok {
			t.Errorf("%s (key %d) is in wire.APIs but has no route in routesByKey", wire.APIName(a.Key), a.Key)
			continue
		}
		if (r.direct == nil) == (r.meta == nil) {
			t.Errorf("%s: a route sets exactly one of direct and meta", wire.APIName(a.Key))
		}
	}
	for key := range routesByKey {
		if _, ok := wire.LookupAPI(key); !ok {
			t.Errorf("route for %s (key %d), which wire.APIs does not advertise", wire.APIName(key), key)
		}
	}
}
