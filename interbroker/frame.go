package interbroker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// Framing on the client side. wire decodes requests and encodes responses,
// the broker's half; this is the other half: build a request frame, read
// a response frame, and strip the response header.

// appendRequest returns req's complete frame (size prefix included) with
// request header v1, or v2 when req's version is flexible; kmsg's
// formatter picks the header from req.IsFlexible. Every frame gets a buffer
// of its own because the formatter writes the size at dst[0], not at the
// end of what dst already held.
func appendRequest(f *kmsg.RequestFormatter, req kmsg.Request, correlationID int32) []byte {
	return f.AppendRequest(make([]byte, 0, 128), req, correlationID)
}

// readFrame reads one size-prefixed frame and returns it without its size.
// A size over max (or negative) is refused before anything is allocated:
// the peer is not speaking Kafka, or something is badly wrong. The frame
// goes into the buffer reuse returns when it is large enough (a caller's
// ResponseBuffer), else into a new one.
func readFrame(r io.Reader, sizeBuf *[4]byte, maxBytes int32, reuse func() []byte) ([]byte, error) {
	if _, err := io.ReadFull(r, sizeBuf[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
	if size < 4 || size > maxBytes {
		return nil, fmt.Errorf("response frame of %d bytes (limit %d)", size, maxBytes)
	}
	var frame []byte
	if b := reuse(); cap(b) >= int(size) {
		frame = b[:size]
	} else {
		frame = make([]byte, size)
	}
	if _, err := io.ReadFull(r, frame); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return frame, nil
}

// frameCorrelationID is the correlation id a response frame starts with.
func frameCorrelationID(frame []byte) int32 {
	return int32(binary.BigEndian.Uint32(frame))
}

// decodeResponse reads a response frame (correlation id first) into resp,
// whose version is already set. Response header v1 (flexible versions)
// adds tagged fields after the correlation id, except for ApiVersions,
// which always answers with header v0 so that a client that asked for a
// version the peer does not know can still read the error code.
func decodeResponse(frame []byte, resp kmsg.Response) (err error) {
	body := frame[4:]
	if resp.IsFlexible() && resp.Key() != wire.KeyApiVersions {
		if body, err = skipTags(body); err != nil {
			return fmt.Errorf("%w: %s v%d header: %v", ErrMalformedResponse, kmsg.NameForKey(resp.Key()), resp.GetVersion(), err)
		}
	}
	defer func() {
		// kmsg's readers bound lengths by the bytes left; this is the
		// last line of defence against a peer's bytes panicking a broker.
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s v%d: decoder panic: %v", ErrMalformedResponse, kmsg.NameForKey(resp.Key()), resp.GetVersion(), p)
		}
	}()
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("%w: %s v%d: %v", ErrMalformedResponse, kmsg.NameForKey(resp.Key()), resp.GetVersion(), err)
	}
	return nil
}

var errShortTags = errors.New("tagged fields run past the frame")

// skipTags skips a KIP-482 tagged-field section (uvarint count, then per
// field uvarint tag, uvarint size and size bytes) and returns what follows.
func skipTags(b []byte) ([]byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return nil, errShortTags
	}
	b = b[w:]
	for range n {
		if _, w = binary.Uvarint(b); w <= 0 {
			return nil, errShortTags
		}
		b = b[w:]
		size, w := binary.Uvarint(b)
		if w <= 0 || size > uint64(len(b)-w) {
			return nil, errShortTags
		}
		b = b[w+int(size):]
	}
	return b, nil
}
