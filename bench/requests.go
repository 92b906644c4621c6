package bench

import (
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// requestCounter counts the produce requests the clients put on the wire
// (a kgo hook, so the count needs nothing from the broker): with many
// small requests, requests/s and broker CPU per request are what tell
// brokers apart, not records/s.
type requestCounter struct{ produce atomic.Int64 }

var _ kgo.HookBrokerWrite = (*requestCounter)(nil)

// OnBrokerWrite implements kgo.HookBrokerWrite.
func (c *requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 0 && err == nil { // Produce
		c.produce.Add(1)
	}
}
