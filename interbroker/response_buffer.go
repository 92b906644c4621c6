package interbroker

// MaxKeptResponse is the largest response frame a ResponseBuffer keeps
// for the next response. A larger one (a follower catching up fetches
// up to replica.fetch.response.max.bytes, 10 MiB by default) is used
// once and left to the garbage collector, so a burst does not leave each
// fetcher holding its largest frame for good.
const MaxKeptResponse = 4 << 20

// ResponseBuffer is memory one caller lends to its successive
// SendReusing calls, one at a time. The zero value is ready; it is not
// safe for concurrent use.
type ResponseBuffer struct{ b []byte }

// keep takes frame back as the memory for the next response (nil rb:
// a plain Send).
func (rb *ResponseBuffer) keep(frame []byte) {
	if rb != nil && cap(frame) <= MaxKeptResponse {
		rb.b = frame[:0]
	}
}

// Drop lets the memory go: for a caller that cannot tell whether
// someone still reads the last response (a partition that did not
// answer in time may still append the records it was given).
func (rb *ResponseBuffer) Drop() { rb.b = nil }
