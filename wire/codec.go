package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KeyApiVersions is the ApiVersions key, special in framing: its response
// always uses response header v0, and an unknown version is answered, not
// refused (KIP-511).
const KeyApiVersions = 18

// Request decoding errors. DecodeRequest returns them inside a
// *DecodeError (errors.Is works); callers log the error with the client's
// address and close the connection.
var (
	ErrMalformedHeader    = errors.New("wire: malformed request header")
	ErrUnknownAPI         = errors.New("wire: unknown or unimplemented API key")
	ErrUnsupportedVersion = errors.New("wire: unsupported API version")
	ErrMalformedBody      = errors.New("wire: malformed request body")
)

// DecodeError is the error DecodeRequest returns. Header holds what could
// be read of the request header before the failure (zero fields were not
// reached), so the log line can name the API, version, correlation id and
// client id. Kind is one of ErrMalformedHeader, ErrUnknownAPI,
// ErrUnsupportedVersion, ErrMalformedBody.
type DecodeError struct {
	Header RequestHeader
	Kind   error
	Detail string
}

func (e *DecodeError) Error() string {
	s := e.Kind.Error() + ": " + APIName(e.Header.APIKey) + " (key " + strconv.Itoa(int(e.Header.APIKey)) +
		") v" + strconv.Itoa(int(e.Header.APIVersion)) +
		", correlation id " + strconv.Itoa(int(e.Header.CorrelationID)) +
		", client id " + strconv.Quote(e.Header.ClientID)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns Kind, so errors.Is(err, ErrUnsupportedVersion) works.
func (e *DecodeError) Unwrap() error { return e.Kind }

// requestHeaderFixed is the size of a request header v1 up to and including
// the client id length: key, version, correlation id, client id length.
const requestHeaderFixed = 10

// DecodeRequest decodes a request frame (without its 4-byte size prefix):
// request header v1 (non-flexible versions) or v2 (flexible versions: v1
// plus tagged fields), then the body through kmsg at the header's version.
// Only versions the APIs table accepts are decoded.
//
// Borrowing: the returned Request's Frame is frame, and kmsg keeps
// byte-slice fields of the body (Produce records, SASL bytes, group member
// metadata) as sub-slices of frame, so frame must stay untouched while the
// request or anything taken from its body is alive. Strings (topic names,
// client id) are copied and may outlive frame. Reply and ClientAddr are
// left for the caller to set.
//
// An ApiVersions request of an unknown version decodes successfully with
// only its header read and Body left at version 0 defaults: the broker
// must answer it (KIP-511), which HandleApiVersions does.
//
// On failure the error is a *DecodeError carrying the header read so far,
// and the returned Request, when non-nil, holds the same header.
func DecodeRequest(frame []byte) (req *Request, err error) {
	if len(frame) < requestHeaderFixed {
		return nil, decodeErr(RequestHeader{}, ErrMalformedHeader, strconv.Itoa(len(frame))+"-byte frame")
	}
	be := binary.BigEndian
	req = &Request{Frame: frame}
	req.Header = RequestHeader{
		APIKey:        int16(be.Uint16(frame[0:])),
		APIVersion:    int16(be.Uint16(frame[2:])),
		CorrelationID: int32(be.Uint32(frame[4:])),
	}
	hdr := &req.Header
	// The client id is a classic nullable string even in header v2.
	idLen := int(int16(be.Uint16(frame[8:])))
	rest := frame[requestHeaderFixed:]
	switch {
	case idLen > len(rest):
		return req, decodeErr(*hdr, ErrMalformedHeader, "client id length "+strconv.Itoa(idLen)+" exceeds the frame")
	case idLen > 0:
		hdr.ClientID = string(rest[:idLen])
		rest = rest[idLen:]
	case idLen < -1:
		return req, decodeErr(*hdr, ErrMalformedHeader, "client id length "+strconv.Itoa(idLen))
	}

	body := kmsg.RequestForKey(hdr.APIKey)
	if body == nil {
		return req, decodeErr(*hdr, ErrUnknownAPI, "")
	}
	if hdr.APIKey == KeyApiVersions && !Accepts(hdr.APIKey, hdr.APIVersion) {
		// KIP-511: answered with a v0 body carrying UNSUPPORTED_VERSION.
		// The body of an unknown version cannot be read; it is not needed.
		body.SetVersion(0)
		req.Body = body
		return req, nil
	}
	if _, ok := LookupAPI(hdr.APIKey); !ok {
		return req, decodeErr(*hdr, ErrUnknownAPI, "not implemented")
	}
	if !Accepts(hdr.APIKey, hdr.APIVersion) {
		return req, decodeErr(*hdr, ErrUnsupportedVersion, "")
	}
	body.SetVersion(hdr.APIVersion)
	if body.IsFlexible() {
		r := kbin.Reader{Src: rest}
		kmsg.SkipTags(&r)
		if !r.Ok() {
			return req, decodeErr(*hdr, ErrMalformedHeader, "header tagged fields")
		}
		rest = r.Src
	}
	if err := readBody(body, rest); err != nil {
		return req, decodeErr(*hdr, ErrMalformedBody, err.Error())
	}
	req.Body = body
	return req, nil
}

// readBody runs kmsg's decoder. kmsg's generated readers bound every array
// and byte length by the bytes left, and fuzzing found no panic in them
// (see codec_fuzz_test.go); the recover is a last line of defence, because
// kmsg is third-party code and a panic here would take down a gnet loop
// with every connection on it. A panic becomes ErrMalformedBody.
func readBody(body kmsg.Request, src []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	return body.ReadFrom(src)
}

func decodeErr(h RequestHeader, kind error, detail string) *DecodeError {
	return &DecodeError{Header: h, Kind: kind, Detail: detail}
}

// AppendResponse appends a complete response frame to dst: the 4-byte size
// prefix, the response header and the body encoded at resp's version. The
// header is v1 (correlation id plus empty tagged fields) for flexible
// versions and v0 (correlation id only) otherwise, except that ApiVersions
// always uses v0 so a client can read its error code at a fixed offset
// whatever version it asked for.
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
