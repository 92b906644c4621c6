package netloop

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"
)

// FuzzTLSServerInput sends arbitrary bytes, instead of a ClientHello, to
// a TLS listener: whatever they are, the server must not panic, must
// close the connection (or wait for more of a record), and must keep
// serving a well-behaved TLS client.
//
//	go test -run '^$' -fuzz FuzzTLSServerInput -fuzztime 1m ./netloop/
func FuzzTLSServerInput(f *testing.F) {
	f.Add(apiVersionsFrame(1))
	f.Add([]byte{0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00})                          // a truncated ClientHello
	f.Add([]byte{0x16, 0x03, 0x03, 0xff, 0xff})                                                        // a record too large
	f.Add([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28})                                            // an alert first
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))                                                 // the wrong protocol
	f.Add([]byte{0x17, 0x03, 0x03, 0x00, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}) // application data first

	fx := newTLSFixture(f)
	s, _ := startServer(f, fx.tlsConfig(Config{RequestReadTimeout: time.Second}, tls.VerifyClientCertIfGiven), answerHandler{})
	good := fx.dial(f, s.Addrs()[0], nil)
	corr := int32(0)
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.Dial("tcp", s.Addrs()[0].String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write(in); err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, _ = io.Copy(io.Discard, c)
		corr++
		(&client{t: t, Conn: good.Conn, r: good.r}).roundTrip(corr)
	})
}
