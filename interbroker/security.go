package interbroker

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Security is how a Client secures its connections, as the inter-broker
// listener's security protocol asks: TLS (SSL), SASL (SASL_PLAINTEXT),
// both (SASL_SSL) or neither (PLAINTEXT, the zero value).
type Security struct {
	// TLS, when set, wraps every connection in a TLS client handshake
	// with this configuration; an empty ServerName is filled in with the
	// peer address's host, which the peer's certificate must then name
	// unless the configuration verifies otherwise.
	TLS *tls.Config
	// SASL, when set, authenticates every connection after ApiVersions
	// (SaslHandshake v1, then SaslAuthenticate), as a Kafka client does.
	SASL sasl.Mechanism
}

// reauthShare is the part of a SASL session's lifetime (KIP-368's
// session_lifetime_ms) after which a connection takes no new requests: the
// next Send opens, and authenticates, a new one before the peer would
// close this one. Kafka's clients re-authenticate at 85-95%.
const reauthShare = 0.85

// secure runs the TLS client handshake on a freshly dialled connection.
func (s *Security) secure(ctx context.Context, nc net.Conn, addr string) (net.Conn, error) {
	if s.TLS == nil {
		return nc, nil
	}
	cfg := s.TLS
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: TLS handshake: %w", ErrAuthentication, err)
	}
	return tc, nil
}

// authenticate runs the SASL exchange on a connection whose ApiVersions
// handshake is done, and returns when the session it opened must be
// renewed (zero: never).
func (c *conn) authenticate(ctx context.Context, mech sasl.Mechanism, versions map[int16]versionRange) (time.Time, error) {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = mech.Name()
	var hsResp kmsg.SASLHandshakeResponse
	if err := c.roundTrip(ctx, versions, hs, &hsResp, 1); err != nil {
		return time.Time{}, err
	}
	if hsResp.ErrorCode != 0 {
		return time.Time{}, fmt.Errorf("%w: SaslHandshake %s: %s (the peer enables %v)", ErrAuthentication, mech.Name(), kerr.Code(hsResp.ErrorCode), hsResp.SupportedMechanisms)
	}
	session, msg, err := mech.Authenticate(ctx, c.addr)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s: %w", ErrAuthentication, mech.Name(), err)
	}
	for {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SASLAuthBytes = msg
		var resp kmsg.SASLAuthenticateResponse
		if err := c.roundTrip(ctx, versions, req, &resp, 2); err != nil {
			return time.Time{}, err
		}
		if resp.ErrorCode != 0 {
			why := kerr.Code(resp.ErrorCode).String()
			if resp.ErrorMessage != nil {
				why += ": " + *resp.ErrorMessage
			}
			return time.Time{}, fmt.Errorf("%w: %s: %s", ErrAuthentication, mech.Name(), why)
		}
		done, reply, err := session.Challenge(resp.SASLAuthBytes)
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: %s: %w", ErrAuthentication, mech.Name(), err)
		}
		if done {
			if resp.SessionLifetimeMillis <= 0 {
				return time.Time{}, nil
			}
			life := time.Duration(float64(resp.SessionLifetimeMillis)*reauthShare) * time.Millisecond
			return time.Now().Add(life), nil
		}
		msg = reply
	}
}

// roundTrip sends req on the connection at the highest version both
// sides know, up to most, and reads the answer into resp.
func (c *conn) roundTrip(ctx context.Context, versions map[int16]versionRange, req kmsg.Request, resp kmsg.Response, most int16) error {
	r, ok := versions[req.Key()]
	if !ok {
		return fmt.Errorf("%w: the peer does not serve %s", ErrAuthentication, kmsg.NameForKey(req.Key()))
	}
	v := min(most, r.max)
	if v < r.min {
		return fmt.Errorf("%w: %s: the peer serves v%d-%d", ErrUnsupported, kmsg.NameForKey(req.Key()), r.min, r.max)
	}
	req.SetVersion(v)
	cl, err := c.write(req, nil)
	if err != nil {
		return err
	}
	frame, err := c.wait(ctx, cl, kmsg.NameForKey(req.Key()))
	if err != nil {
		return err
	}
	resp.SetVersion(v)
	return decodeResponse(frame, resp)
}
