package wire

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzDecodeRequest feeds arbitrary frames to DecodeRequest. It must never
// panic; an accepted frame must carry an accepted key and version (or be
// the KIP-511 ApiVersions case), its body must re-encode, and a failure
// must be a *DecodeError of one of the four kinds.
func FuzzDecodeRequest(f *testing.F) {
	for _, e := range requestSeeds() {
		f.Add(e.args[0].([]byte))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		req, err := DecodeRequest(frame)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			switch de.Kind {
			case ErrMalformedHeader, ErrUnknownAPI, ErrUnsupportedVersion, ErrMalformedBody:
			default:
				t.Fatalf("unexpected kind %v", de.Kind)
			}
			_ = de.Error()
			return
		}
		h := req.Header
		if h.APIKey == KeyApiVersions {
			resp := HandleApiVersions(req)
			out := AppendResponse(nil, h.CorrelationID, resp)
			back := &kmsg.ApiVersionsResponse{Version: resp.Version}
			if err := back.ReadFrom(out[8:]); err != nil {
				t.Fatalf("ApiVersions response does not decode: %v", err)
			}
			if !Accepts(h.APIKey, h.APIVersion) && resp.Version != 0 {
				t.Fatal("KIP-511 answer must be v0")
			}
			return
		}
		if !Accepts(h.APIKey, h.APIVersion) {
			t.Fatalf("decoded a refused request %s v%d", APIName(h.APIKey), h.APIVersion)
		}
		if req.Body.GetVersion() != h.APIVersion || req.Body.Key() != h.APIKey {
			t.Fatal("body version or key differs from the header")
		}
		_ = req.Body.AppendTo(nil)
	})
}
