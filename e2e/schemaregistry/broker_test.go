package schemaregistry

import (
	"testing"

	"github.com/samsa-io/samsa/testkit"
)

// broker is an in-process broker (started by internal/wiring, as `samsa
// serve` starts) with an HTTP listener, so the registry runs.
type broker struct{ *testkit.InProcess }

func startBroker(t *testing.T) broker {
	t.Helper()
	return broker{testkit.StartInProcess(t, "samsa.http.listeners", "127.0.0.1:0")}
}

// URL is the registry's base URL; it changes with Restart.
func (b broker) URL() string { return "http://" + b.Web.Addrs()[0].String() }
