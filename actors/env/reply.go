package env

import (
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// Reply encodes resp as the answer to req and hands it to netloop. The
// buffer starts at the size of the last response of the same API, so a
// large answer (Metadata for every topic) is not grown step by step.
func Reply(req *wire.Request, resp kmsg.Response) {
	key := req.Header.APIKey
	hint := 256
	if key >= 0 && int(key) < len(sizeHints) {
		hint = max(hint, int(sizeHints[key].Load()))
	}
	b := wire.AppendResponse(make([]byte, 0, hint), req.Header.CorrelationID, resp)
	if key >= 0 && int(key) < len(sizeHints) {
		sizeHints[key].Store(int32(min(len(b), 1<<20)))
	}
	req.Reply(&wire.Response{Chunks: []wire.Chunk{{Bytes: b}}})
}

// sizeHints is the last encoded response size per API key.
var sizeHints [128]atomic.Int32
