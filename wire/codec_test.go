package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDecodeRoundTrip encodes a fully populated request of every served API
// at every accepted version, decodes it, and checks the header and that the
// decoded body re-encodes to the same bytes.
func TestDecodeRoundTrip(t *testing.T) {
	for _, row := range APIs {
		for v := row.Accept; v <= row.Max; v++ {
			want := sampleRequest(row.Key, v)
			frame := encodeFrame(want, 77, "client-a")
			req, err := DecodeRequest(frame)
			if err != nil {
				t.Fatalf("%s v%d: %v", APIName(row.Key), v, err)
			}
			h := req.Header
			if h.APIKey != row.Key || h.APIVersion != v || h.CorrelationID != 77 || h.ClientID != "client-a" {
				t.Fatalf("%s v%d: header %+v", APIName(row.Key), v, h)
			}
			if got, exp := req.Body.AppendTo(nil), want.AppendTo(nil); !bytes.Equal(got, exp) {
				t.Fatalf("%s v%d: body re-encodes differently\n got %x\nwant %x", APIName(row.Key), v, got, exp)
			}
			if &req.Frame[0] != &frame[0] {
				t.Fatalf("%s v%d: Frame is not the input frame", APIName(row.Key), v)
			}
		}
	}
}

func TestDecodeNullClientID(t *testing.T) {
	frame := encodeFrame(sampleRequest(3, 1), 5, "")
	// Replace the empty client id (length 0) with null (length -1).
	binary.BigEndian.PutUint16(frame[8:], 0xffff)
	req, err := DecodeRequest(frame)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.ClientID != "" {
		t.Fatalf("null client id decoded as %q", req.Header.ClientID)
	}
}

// TestDecodeFlexibleHeaderTags checks that header v2 tagged fields are
// skipped, not read as body.
func TestDecodeFlexibleHeaderTags(t *testing.T) {
	want := sampleRequest(3, 12)
	frame := encodeFrame(want, 9, "c")
	// After the client id (10 + 1 bytes) comes the empty tag section (0).
	// Replace it with one tag (key 5, 2 bytes of data).
	at := 11
	if frame[at] != 0 {
		t.Fatalf("expected empty header tags at %d, found %d", at, frame[at])
	}
	tagged := append(append(append([]byte{}, frame[:at]...), 1, 5, 2, 0xaa, 0xbb), frame[at+1:]...)
	req, err := DecodeRequest(tagged)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(req.Body.AppendTo(nil), want.AppendTo(nil)) {
		t.Fatal("body misread after header tags")
	}
}

func TestDecodeErrors(t *testing.T) {
	good := encodeFrame(sampleRequest(3, 4), 42, "cli")
	withVersion := func(key, v int16) []byte {
		f := append([]byte{}, good...)
		binary.BigEndian.PutUint16(f[0:], uint16(key))
		binary.BigEndian.PutUint16(f[2:], uint16(v))
		return f
	}
	tests := []struct {
		name  string
		frame []byte
		kind  error
		key   int16
		ver   int16
		cid   string
	}{
		{"short", good[:9], ErrMalformedHeader, 0, 0, ""},
		{"client id past end", good[:12], ErrMalformedHeader, 3, 4, ""},
		{"unknown key", withVersion(999, 0), ErrUnknownAPI, 999, 0, "cli"},
		{"unimplemented key", withVersion(4, 0), ErrUnknownAPI, 4, 0, "cli"}, // LeaderAndIsr: ZK-era inter-broker RPC
		{"version too new", withVersion(3, 13), ErrUnsupportedVersion, 3, 13, "cli"},
		{"negative version", withVersion(3, -1), ErrUnsupportedVersion, 3, -1, "cli"},
		{"truncated body", good[:len(good)-3], ErrMalformedBody, 3, 4, "cli"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := DecodeRequest(tc.frame)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("error %v, want %v", err, tc.kind)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if de.Header.APIKey != tc.key || de.Header.APIVersion != tc.ver || de.Header.ClientID != tc.cid {
				t.Fatalf("error header %+v", de.Header)
			}
			if tc.kind != ErrMalformedHeader || tc.name != "short" {
				if req == nil || req.Header != de.Header {
					t.Fatalf("returned request %+v does not carry the header", req)
				}
			}
			if de.Error() == "" {
				t.Fatal("empty error text")
			}
		})
	}
	bad := []byte{0, 3, 0, 4, 0, 0, 0, 1, 0x80, 0x00}
	if _, err := DecodeRequest(bad); !errors.Is(err, ErrMalformedHeader) {
		t.Fatalf("client id length -32768: %v", err)
	}
}

func TestDecodeApiVersionsUnknownVersion(t *testing.T) {
	r := sampleRequest(KeyApiVersions, 4)
	frame := encodeFrame(r, 1, "c")
	binary.BigEndian.PutUint16(frame[2:], 9) // a version from the future
	req, err := DecodeRequest(frame)
	if err != nil {
		t.Fatalf("unknown ApiVersions version must decode: %v", err)
	}
	if req.Header.APIVersion != 9 || req.Body.GetVersion() != 0 {
		t.Fatalf("header v%d body v%d", req.Header.APIVersion, req.Body.GetVersion())
	}
}

func TestAppendResponseHeaders(t *testing.T) {
	cases := []struct {
		resp     kmsg.Response
		headerV1 bool
	}{
		{&kmsg.MetadataResponse{Version: 8}, false},
		{&kmsg.MetadataResponse{Version: 9}, true},
		{&kmsg.ApiVersionsResponse{Version: 3}, false}, // always header v0
		{&kmsg.ApiVersionsResponse{Version: 0}, false},
		{&kmsg.CreateTopicsResponse{Version: 5}, true},
	}
	for _, c := range cases {
		prefix := []byte("xyz")
		out := AppendResponse(prefix, 0x01020304, c.resp)
		if !bytes.Equal(out[:3], prefix) {
			t.Fatal("prefix clobbered")
		}
		frame := out[3:]
		if int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
			t.Fatalf("%s v%d: size %d, frame %d", APIName(c.resp.Key()), c.resp.GetVersion(), binary.BigEndian.Uint32(frame), len(frame)-4)
		}
		if binary.BigEndian.Uint32(frame[4:]) != 0x01020304 {
			t.Fatal("correlation id")
		}
		body := frame[8:]
		if c.headerV1 {
			if body[0] != 0 {
				t.Fatalf("%s v%d: expected empty header tags", APIName(c.resp.Key()), c.resp.GetVersion())
			}
			body = body[1:]
		}
		if !bytes.Equal(body, c.resp.AppendTo(nil)) {
			t.Fatalf("%s v%d: body differs", APIName(c.resp.Key()), c.resp.GetVersion())
		}
		// A client decodes it back.
		back := kmsg.ResponseForKey(c.resp.Key())
		back.SetVersion(c.resp.GetVersion())
		if err := back.ReadFrom(body); err != nil {
			t.Fatal(err)
		}
	}
	req := &Request{Header: RequestHeader{CorrelationID: 7}}
	r := EncodeResponse(req, &kmsg.MetadataResponse{Version: 1})
	if len(r.Chunks) != 1 || r.Len() != int64(len(r.Chunks[0].Bytes)) || binary.BigEndian.Uint32(r.Chunks[0].Bytes[4:]) != 7 {
		t.Fatal("EncodeResponse framing")
	}
}
