package testkit

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AnsweredFrom opens a connection to addr from the local address ip (a
// loopback address other than 127.0.0.1 makes another client address),
// sends ApiVersions and reports whether an answer began within wait. The
// connection is returned open, for the caller to close: an open
// connection counts against the broker's connection limits. err is a
// failed dial.
func AnsweredFrom(addr, ip string, wait time.Duration) (c net.Conn, answered bool, err error) {
	d := net.Dialer{Timeout: wait, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err = d.Dial("tcp", addr)
	if err != nil {
		return nil, false, err
	}
	_ = c.SetDeadline(time.Now().Add(wait))
	req := kmsg.NewPtrApiVersionsRequest()
	if _, err := c.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("samsa-testkit-probe")).AppendRequest(nil, req, 1)); err != nil {
		return c, false, nil
	}
	var size [4]byte
	_, rerr := io.ReadFull(c, size[:])
	_ = c.SetDeadline(time.Time{})
	return c, rerr == nil, nil
}

// Answered is AnsweredFrom for test t, waiting up to 10 s: a failed dial
// fails t, and the connection stays open until t ends.
func Answered(t testing.TB, addr, ip string) bool {
	t.Helper()
	c, ok, err := AnsweredFrom(addr, ip, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, ip, err)
	}
	t.Cleanup(func() { c.Close() })
	return ok
}
