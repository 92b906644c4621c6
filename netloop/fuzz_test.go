package netloop

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// FuzzServerInput sends arbitrary bytes on a connection to a real server:
// whatever they are, the server must not panic, must not hold the
// connection forever when the input is a complete bad frame, and must
// keep serving a well-behaved client.
//
//	go test -run '^$' -fuzz FuzzServerInput -fuzztime 1m ./netloop/
func FuzzServerInput(f *testing.F) {
	f.Add(apiVersionsFrame(1))
	f.Add(metadataFrame(2))
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3})
	f.Add(rawFrame(9999, 0, 3, "x"))
	f.Add(append(metadataFrame(3)[:20:20], 0xde, 0xad))
	f.Add(binary.BigEndian.AppendUint32(nil, 0))

	s, _ := startServer(f, Config{MaxRequestBytes: 1 << 16}, answerHandler{})
	good := dial(f, s.Addrs()[0])
	corr := int32(0)
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.Dial("tcp", s.Addrs()[0].String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write(in); err != nil {
			return // the server may close before reading everything
		}
		// Read whatever comes back until the server closes the connection
		// or goes quiet (a partial frame waits for more bytes).
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, _ = io.Copy(io.Discard, c)
		corr++
		(&client{t: t, Conn: good.Conn, r: good.r}).roundTrip(corr)
	})
}
