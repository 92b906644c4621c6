package security

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawConn sends requests of non-flexible versions (response header v0)
// one at a time, for a client that does what the real ones do not: let
// its session lapse.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	corr int32
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, conn: c, r: bufio.NewReader(c)}
}

// call sends req and reads the response into resp; an error is the
// connection's (closed by the broker: io.EOF).
func (c *rawConn) call(req kmsg.Request, resp kmsg.Response) error {
	c.corr++
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, c.corr)
	if err := c.conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	if _, err := c.conn.Write(frame); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		return err
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.r, buf); err != nil {
		return err
	}
	if len(buf) < 4 || int32(binary.BigEndian.Uint32(buf)) != c.corr {
		c.t.Fatalf("response %x does not answer correlation id %d", buf, c.corr)
	}
	resp.SetVersion(req.GetVersion())
	return resp.ReadFrom(buf[4:])
}

// A session lasts connections.max.reauth.ms (SaslAuthenticate v1's
// session_lifetime_ms); a client that does not re-authenticate in time
// has its connection closed on its next request.
func TestSessionExpiresWithoutReauthentication(t *testing.T) {
	const lifetime = 300 * time.Millisecond
	b := startSASLBroker(t, "listener.name.sasl_plaintext.connections.max.reauth.ms", "300")
	c := dialRaw(t, b.saslAddr())
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	if err := c.call(hs, hsResp); err != nil || hsResp.ErrorCode != 0 {
		t.Fatalf("handshake: %v %+v", err, hsResp)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte("\x00alice\x00alice-secret")
	authResp := kmsg.NewPtrSASLAuthenticateResponse()
	started := time.Now()
	if err := c.call(auth, authResp); err != nil || authResp.ErrorCode != 0 {
		t.Fatalf("authenticate: %v %+v", err, authResp)
	}
	if got := time.Duration(authResp.SessionLifetimeMillis) * time.Millisecond; got <= 0 || got > lifetime {
		t.Fatalf("session_lifetime_ms %d, want (0, 300]", authResp.SessionLifetimeMillis)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 1
	if err := c.call(md, kmsg.NewPtrMetadataResponse()); err != nil {
		t.Fatalf("metadata within the session: %v", err)
	}
	// Ask until the broker closes the connection; it must not before
	// the session ends, and must soon after.
	for {
		err := c.call(md, kmsg.NewPtrMetadataResponse())
		if err == nil {
			if time.Since(started) > 20*lifetime {
				t.Fatal("the session outlived connections.max.reauth.ms")
			}
			continue
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			t.Logf("connection ended with %v", err)
		}
		if since := time.Since(started); since < lifetime {
			t.Fatalf("closed after %v, before the session's end", since)
		}
		break
	}
	if len(b.log.Matching("session expired", "api=Metadata")) == 0 {
		t.Fatalf("no log line for the expired session; log:\n%v", b.log.Matching())
	}
}

// franz-go re-authenticates (KIP-368) and goes on producing across many
// session lifetimes.
func TestClientReauthenticates(t *testing.T) {
	b := startSASLBroker(t, "connections.max.reauth.ms", "500")
	createScramUser(t, b.saslAddr(), plainMech(adminUser, adminPass), "SCRAM-SHA-512", "frank", "frank-secret")
	m := scramMech("SCRAM-SHA-512", "frank", "frank-secret")
	cl := client(t, b.saslAddr(), m)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	for n := 0; time.Since(start) < 2500*time.Millisecond; n++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "reauth", Value: []byte{byte(n)}}).FirstErr(); err != nil {
			t.Fatalf("produce %d after %v: %v", n, time.Since(start), err)
		}
	}
	if lines := b.log.Matching("before authentication"); len(lines) > 0 {
		t.Fatalf("the client's session lapsed: %v", lines)
	}
}
