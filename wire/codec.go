package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KeyApiVersions is the ApiVersions key, special in framing: its response
// always uses response header v0, and an unknown version is answered, not
// refused (KIP-511).
const KeyApiVersions = 18

// Request decoding errors. DecodeRequest wraps them with detail; callers
// log the detail with the client's address and close the connection.
var (
	ErrMalformedHeader    = errors.New("wire: malformed request header")
	ErrUnknownAPI         = errors.New("wire: unknown or unimplemented API key")
	ErrUnsupportedVersion = errors.New("wire: unsupported API version")
	ErrMalformedBody      = errors.New("wire: malformed request body")
)

// DecodeRequest decodes a request frame (without its 4-byte size prefix):
// the header, then the body through kmsg. The returned Request's Body and
// Header.ClientID alias frame for record bytes, so frame must stay
// untouched while the request is alive. Reply and ClientAddr are left for
// the caller to set.
//
// An ApiVersions request of an unknown version decodes successfully with
// only its header read and Body left at version 0 defaults: the broker
// must answer it (KIP-511), which HandleApiVersions does. On error the
// returned header, when non-nil, holds what could be read, for the log line.
func DecodeRequest(frame []byte) (*Request, error) {
	if len(frame) < 10 { // key, version, correlation id, client id length
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformedHeader, len(frame))
	}
	be := binary.BigEndian
	hdr := RequestHeader{
		APIKey:        int16(be.Uint16(frame[0:])),
		APIVersion:    int16(be.Uint16(frame[2:])),
		CorrelationID: int32(be.Uint32(frame[4:])),
	}
	req := &Request{Header: hdr, Frame: frame}
	idLen := int(int16(be.Uint16(frame[8:])))
	rest := frame[10:]
	if idLen > 0 {
		if idLen > len(rest) {
			return req, fmt.Errorf("%w: client id length %d exceeds frame", ErrMalformedHeader, idLen)
		}
		req.Header.ClientID = string(rest[:idLen])
		rest = rest[idLen:]
	} else if idLen < -1 {
		return req, fmt.Errorf("%w: client id length %d", ErrMalformedHeader, idLen)
	}

	body := kmsg.RequestForKey(hdr.APIKey)
	if body == nil {
		return req, fmt.Errorf("%w: key %d", ErrUnknownAPI, hdr.APIKey)
	}
	if hdr.APIKey == KeyApiVersions && !Accepts(hdr.APIKey, hdr.APIVersion) {
		// KIP-511: answer with a v0 body carrying UNSUPPORTED_VERSION.
		body.SetVersion(0)
		req.Body = body
		return req, nil
	}
	if _, ok := LookupAPI(hdr.APIKey); !ok {
		return req, fmt.Errorf("%w: %s (key %d)", ErrUnknownAPI, APIName(hdr.APIKey), hdr.APIKey)
	}
	if !Accepts(hdr.APIKey, hdr.APIVersion) {
		return req, fmt.Errorf("%w: %s v%d", ErrUnsupportedVersion, APIName(hdr.APIKey), hdr.APIVersion)
	}
	body.SetVersion(hdr.APIVersion)
	if body.IsFlexible() {
		r := kbin.Reader{Src: rest}
		kmsg.SkipTags(&r)
		if !r.Ok() {
			return req, fmt.Errorf("%w: header tagged fields", ErrMalformedHeader)
		}
		rest = r.Src
	}
	if err := body.ReadFrom(rest); err != nil {
		return req, fmt.Errorf("%w: %s v%d: %v", ErrMalformedBody, APIName(hdr.APIKey), hdr.APIVersion, err)
	}
	req.Body = body
	return req, nil
}

// AppendResponse appends a complete response frame to dst: the 4-byte size
// prefix, the response header (v0 for ApiVersions and non-flexible
// versions, v1 with empty tagged fields otherwise) and the body encoded at
// resp's version.
func AppendResponse(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	if resp.IsFlexible() && resp.Key() != KeyApiVersions {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// EncodeResponse encodes resp as the answer to req into a single-chunk
// Response.
func EncodeResponse(req *Request, resp kmsg.Response) *Response {
	b := AppendResponse(make([]byte, 0, 256), req.Header.CorrelationID, resp)
	return &Response{Chunks: []Chunk{{Bytes: b}}}
}
