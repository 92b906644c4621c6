package testkit

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// NewClient returns a franz-go client with opts, failing t if it cannot
// be made and closing it when t ends.
func NewClient(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
