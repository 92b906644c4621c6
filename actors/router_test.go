package actors

import (
	"slices"
	"testing"

	"github.com/samsa-io/samsa/actors/api"
	"github.com/samsa-io/samsa/wire"
)

// TestEveryAdvertisedAPIHasAHandler keeps the API registry and the wire
// API table in step: an API the broker advertises but does not handle
// would leave its clients waiting, and one handled but not advertised is
// never asked for.
func TestEveryAdvertisedAPIHasAHandler(t *testing.T) {
	reg := api.ByKey()
	for _, a := range slices.Concat(wire.APIs, wire.InterBrokerAPIs, wire.TransactionAPIs, wire.ShareGroupAPIs) {
		r, ok := reg[a.Key]
		if !ok {
			t.Errorf("%s (key %d) is in wire.APIs but has no entry in api.All", wire.APIName(a.Key), a.Key)
			continue
		}
		if r.Handle == nil {
			t.Errorf("%s: no handler", wire.APIName(a.Key))
		}
	}
	if n := len(api.All()); n != len(reg) {
		t.Errorf("api.All has %d entries for %d keys: an API is registered twice", n, len(reg))
	}
	interBroker := make(map[int16]bool)
	for _, a := range slices.Concat(wire.InterBrokerAPIs, wire.TransactionAPIs, wire.ShareGroupAPIs) {
		interBroker[a.Key] = true
	}
	for key := range reg {
		if _, ok := wire.LookupAPI(key); !ok && !interBroker[key] {
			t.Errorf("handler for %s (key %d), which wire.APIs does not advertise", wire.APIName(key), key)
		}
	}
}
