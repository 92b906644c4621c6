package fetch

import (
	"time"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/wire"
)

// throttleFetch counts a consumer's response against its
// consumer_byte_rate: the record bytes it carries. Over the quota, the
// response still carries its records (samsa does not, as Kafka does,
// swap in an empty response and take the bytes back: the session state
// would then have to be rolled back too); it tells the client how long
// to wait (the returned time: the caller holds the connection for it
// once the response is written).
// The size cap of Handle keeps one response within the quota's window,
// so the rate over time stays at the quota either way.
func throttleFetch(svc *Service, q *quota.Manager, req *wire.Request, resp *wire.FetchResponse) time.Duration {
	var n int64
	for ti := range resp.Topics {
		for pi := range resp.Topics[ti].Partitions {
			for _, c := range resp.Topics[ti].Partitions[pi].Records {
				n += c.Len()
			}
		}
	}
	d := q.Record(quota.Fetch, req.Session.Principal(), req.Header.ClientID, float64(n), svc.env.Now())
	if d > 0 {
		resp.ThrottleMillis = env.ThrottleMillis(d)
	}
	return d
}
