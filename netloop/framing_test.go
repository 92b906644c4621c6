package netloop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// A frame that arrives one byte per read is buffered by gnet and decoded
// once complete.
func TestFrameOneByteAtATime(t *testing.T) {
	reads := make(chan int, 1024)
	s, _ := newServer(t, Config{}, answerHandler{})
	s.hooks.afterTraffic = func(buffered int) { reads <- buffered }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)

	c := dial(t, s.Addrs()[0])
	for round := int32(1); round <= 2; round++ {
		frame := apiVersionsFrame(round)
		for i := range frame {
			c.send(frame[i : i+1])
			// Wait until the server has read this byte before sending the
			// next, so every read delivers exactly one byte.
			buffered := waitSignal(t, reads, "a read")
			want := i + 1
			if i == len(frame)-1 {
				want = 0 // the complete frame was consumed
			}
			if buffered != want {
				t.Fatalf("after byte %d the server holds %d bytes, want %d", i, buffered, want)
			}
		}
		got, _ := c.recv()
		if got != round {
			t.Fatalf("correlation id %d, want %d", got, round)
		}
	}
	if st := s.Stats(); st.Requests != 2 {
		t.Fatalf("%d requests decoded, want 2", st.Requests)
	}
}

// Many frames in one write (and so in one or few reads) are all decoded,
// and answered in order.
func TestManyFramesInOneRead(t *testing.T) {
	s, _ := startServer(t, Config{}, answerHandler{})
	c := dial(t, s.Addrs()[0])
	const n = 200
	var all bytes.Buffer
	for i := int32(0); i < n; i++ {
		if i%2 == 0 {
			all.Write(apiVersionsFrame(i))
		} else {
			all.Write(metadataFrame(i))
		}
	}
	c.send(all.Bytes())
	for i := int32(0); i < n; i++ {
		if got, _ := c.recv(); got != i {
			t.Fatalf("response %d has correlation id %d", i, got)
		}
	}
	if st := stopped(t, s); st.Requests != n || st.Responses != n {
		t.Fatalf("stats %+v", st)
	}
}

// A size prefix above the limit or below zero closes the connection at
// once, without waiting for (or buffering) the body, with one log line.
func TestFrameSizeOutOfRange(t *testing.T) {
	const max = 1 << 20
	s, logs := startServer(t, Config{MaxRequestBytes: max}, answerHandler{})
	for _, size := range []int32{max + 1, -1, -1 << 31, 1<<31 - 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			before := s.Stats().FramesRejected
			c := dial(t, s.Addrs()[0])
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(size))
			c.send(hdr[:]) // only the prefix: the server must not wait for a body
			c.expectClosed()
			if got := s.Stats().FramesRejected - before; got != 1 {
				t.Fatalf("%d frames rejected, want 1", got)
			}
			if l := logs.lines("request size out of range", c.LocalAddr().String()); len(l) != 1 {
				t.Fatalf("want one log line naming the client, got %q", l)
			}
		})
	}
	// A frame of exactly the limit is accepted (and then fails to decode,
	// which is a different error).
	c := dial(t, s.Addrs()[0])
	frame := make([]byte, 4+max)
	binary.BigEndian.PutUint32(frame, max)
	binary.BigEndian.PutUint16(frame[4:], 9999) // unknown API key
	rejected := s.Stats().FramesRejected
	c.send(frame)
	c.expectClosed()
	if st := s.Stats(); st.FramesRejected != rejected || st.DecodeErrors != 1 {
		t.Fatalf("a frame of exactly max bytes: %+v", st)
	}
}

// A client that goes away in the middle of a frame leaves nothing behind
// and disturbs no one.
func TestDisconnectMidFrame(t *testing.T) {
	closed := make(chan struct{}, 8)
	s, _ := newServer(t, Config{}, answerHandler{})
	s.hooks.afterClose = func() { closed <- struct{}{} }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)

	good := dial(t, s.Addrs()[0])
	good.roundTrip(1)
	bad := dial(t, s.Addrs()[0])
	frame := metadataFrame(7)
	bad.send(frame[:len(frame)/2])
	bad.Close()
	waitSignal(t, closed, "the server to close the half-sent connection")
	good.roundTrip(2)
	if st := s.Stats(); st.Requests != 2 || st.ConnectionsOpen != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// Unknown keys, unsupported versions and undecodable bodies close the
// connection with one log line naming the client's address and id.
func TestBadRequestsCloseWithOneLogLine(t *testing.T) {
	s, logs := startServer(t, Config{}, answerHandler{})
	good := dial(t, s.Addrs()[0])

	metadataV1 := metadataFrame(1)
	garbageBody := append([]byte(nil), metadataV1[:4+10+len("test-client")]...)
	garbageBody = append(garbageBody, 0x00, 0x00, 0x10, 0x00, 0x01) // 4096 topics in 1 byte
	binary.BigEndian.PutUint32(garbageBody, uint32(len(garbageBody)-4))

	unsupported := kmsg.NewPtrMetadataRequest()
	unsupported.Version = 99
	cases := map[string][]byte{
		"unknown key":         rawFrame(9999, 0, 5, "bad-client"),
		"unsupported version": requestFrame(unsupported, 5, "bad-client"),
		"garbage body":        bytes.Replace(garbageBody, []byte("test-client"), []byte("bad-client!"), 1),
		"short header":        {0, 0, 0, 3, 0, 3, 0},
	}
	for name, frame := range cases {
		t.Run(name, func(t *testing.T) {
			before := s.Stats().DecodeErrors
			c := dial(t, s.Addrs()[0])
			c.send(frame)
			c.expectClosed()
			if got := s.Stats().DecodeErrors - before; got != 1 {
				t.Fatalf("%d decode errors, want 1", got)
			}
			want := []string{"cannot serve", c.LocalAddr().String()}
			if name != "short header" {
				want = append(want, "bad-client")
			}
			if l := logs.lines(want...); len(l) != 1 {
				t.Fatalf("want one log line with %q, got %q", want, l)
			}
			good.roundTrip(int32(before) + 100)
		})
	}
}

// An ApiVersions request of a version the broker does not know is handed
// to the handler (KIP-511), which answers UNSUPPORTED_VERSION at v0.
func TestApiVersionsUnknownVersionReachesHandler(t *testing.T) {
	h := newHoldHandler()
	s, _ := startServer(t, Config{}, h)
	c := dial(t, s.Addrs()[0])
	c.send(rawFrame(wire.KeyApiVersions, 99, 42, "future-client"))
	req := h.next(t)
	if req.Header.APIVersion != 99 || req.Header.ClientID != "future-client" || req.ClientAddr != c.LocalAddr().String() {
		t.Fatalf("request header %+v from %s", req.Header, req.ClientAddr)
	}
	req.Reply(answer(req))
	corr, body := c.recv()
	resp := kmsg.NewPtrApiVersionsResponse()
	if err := resp.ReadFrom(body); err != nil || corr != 42 || resp.ErrorCode != 35 {
		t.Fatalf("corr %d, error code %d, err %v; want 42, 35 (UNSUPPORTED_VERSION)", corr, resp.ErrorCode, err)
	}
}

// rawFrame is a request frame with an empty body and any key and version.
func rawFrame(key, version int16, corr int32, clientID string) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID)))
	b = append(b, clientID...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}
