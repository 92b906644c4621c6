package wire

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// HandleApiVersions answers an ApiVersions request from the APIs table. It
// is pure: the same table decides what DecodeRequest accepts, so what is
// advertised is exactly what is served.
//
//   - A version outside the table's ApiVersions row (KIP-511; DecodeRequest
//     lets it through with a v0 body) gets a v0 response with
//     UNSUPPORTED_VERSION and only the ApiVersions row, so the client
//     retries with a version both sides know.
//   - v3+ requests must name the client software with
//     [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? (name and version);
//     otherwise INVALID_REQUEST, after which librdkafka retries with v0.
//   - No features are advertised (SupportedFeatures and FinalizedFeatures
//     empty): Java producers then use the classic transaction protocol.
//
// The response is encoded at the request's version; AppendResponse writes
// it with response header v0, as ApiVersions always is.
func HandleApiVersions(req *Request) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	version := req.Header.APIVersion
	row, _ := LookupAPI(KeyApiVersions)
	if !Accepts(KeyApiVersions, version) {
		resp.SetVersion(0)
		resp.ErrorCode = kerr.UnsupportedVersion.Int16()
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: KeyApiVersions, MinVersion: row.Min, MaxVersion: row.Max}}
		return resp
	}
	resp.SetVersion(version)
	if version >= 3 {
		body, _ := req.Body.(*kmsg.ApiVersionsRequest)
		if body == nil || !validSoftwareID(body.ClientSoftwareName) || !validSoftwareID(body.ClientSoftwareVersion) {
			resp.ErrorCode = kerr.InvalidRequest.Int16()
			return resp
		}
	}
	resp.ApiKeys = make([]kmsg.ApiVersionsResponseApiKey, len(APIs))
	for i, a := range APIs {
		resp.ApiKeys[i] = kmsg.ApiVersionsResponseApiKey{ApiKey: a.Key, MinVersion: a.Min, MaxVersion: a.Max}
	}
	return resp
}

// validSoftwareID reports whether s matches
// [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?, the KIP-511 rule for client
// software names and versions.
func validSoftwareID(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
