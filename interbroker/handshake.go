package interbroker

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// handshakeVersion is the ApiVersions version a new connection asks with
// first: v3 is the first flexible one, which Kafka brokers since 2.4 and
// samsa accept; it names the client software (KIP-511).
const handshakeVersion = 3

// softwareName is the ApiVersions v3 client software name.
const softwareName = "samsa"

type versionRange struct{ min, max int16 }

// open dials (with the TLS handshake, when sec asks for TLS), starts the
// reader, asks the peer's API versions and authenticates (when sec asks
// for SASL), then closes ready. Every failure kills the connection, which is how the
// waiting Sends learn of it.
func (c *conn) open(ctx context.Context, dial Dialer, sec *Security, softwareVersion string, wg *sync.WaitGroup) {
	defer close(c.ready)
	dctx, cancel := context.WithTimeout(ctx, c.timeout)
	nc, err := dial(dctx, c.addr)
	if err == nil {
		nc, err = sec.secure(dctx, nc, c.addr)
	}
	cancel()
	if err != nil {
		c.kill(fmt.Errorf("dial: %w", err))
		return
	}
	c.mu.Lock()
	if c.err != nil { // closed while dialling
		c.mu.Unlock()
		nc.Close()
		return
	}
	c.nc = nc
	c.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.readLoop()
	}()
	versions, err := c.handshake(ctx, softwareVersion)
	if err == nil && sec.SASL != nil {
		var renew time.Time
		renew, err = c.authenticate(ctx, sec.SASL, versions)
		if !renew.IsZero() {
			c.renewAt.Store(renew.UnixNano())
		}
	}
	if err != nil {
		// The peer closes a connection whose authentication failed
		// right after answering, so the reader may well have killed it
		// first, with a bare EOF: the answer is the better reason.
		c.openErr = fmt.Errorf("%w: %s: %w", ErrConnection, c.addr, err)
		c.kill(err)
		return
	}
	c.versions = versions
	c.log.Debug("interbroker: connected", "addr", c.addr, "apis", len(versions))
}

// handshake asks ApiVersions v3 and, if the peer answers
// UNSUPPORTED_VERSION (an older broker, KIP-511), asks again at the
// version its answer names for ApiVersions, or v0.
func (c *conn) handshake(ctx context.Context, softwareVersion string) (map[int16]versionRange, error) {
	resp, err := c.apiVersions(ctx, handshakeVersion, softwareVersion)
	if err != nil {
		return nil, err
	}
	if resp.ErrorCode == kerr.UnsupportedVersion.Int16() {
		retry := int16(0)
		for _, k := range resp.ApiKeys {
			if k.ApiKey == wire.KeyApiVersions && k.MaxVersion < handshakeVersion && k.MaxVersion > 0 {
				retry = k.MaxVersion
			}
		}
		if resp, err = c.apiVersions(ctx, retry, softwareVersion); err != nil {
			return nil, err
		}
	}
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("ApiVersions v%d answered %s", resp.Version, kerr.Code(resp.ErrorCode))
	}
	versions := make(map[int16]versionRange, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		versions[k.ApiKey] = versionRange{min: k.MinVersion, max: k.MaxVersion}
	}
	return versions, nil
}

func (c *conn) apiVersions(ctx context.Context, version int16, softwareVersion string) (*kmsg.ApiVersionsResponse, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(version)
	req.ClientSoftwareName = softwareName
	req.ClientSoftwareVersion = softwareVersion
	cl, err := c.write(req, nil)
	if err != nil {
		return nil, err
	}
	frame, err := c.wait(ctx, cl, "ApiVersions")
	if err != nil {
		return nil, err
	}
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	// A peer that does not know our version answers with a v0 body
	// (error code first, after the correlation id), which cannot be
	// read at the version asked.
	if len(frame) >= 6 && int16(binary.BigEndian.Uint16(frame[4:])) == kerr.UnsupportedVersion.Int16() {
		resp.SetVersion(0)
	}
	if err := decodeResponse(frame, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// chooseVersion picks the version to send req at: the pinned one if the
// peer accepts it, else the highest both sides know.
func chooseVersion(peer map[int16]versionRange, req kmsg.Request, pinned bool) (int16, error) {
	name := kmsg.NameForKey(req.Key())
	r, ok := peer[req.Key()]
	if !ok {
		return 0, fmt.Errorf("%w: the peer does not serve %s (key %d)", ErrUnsupported, name, req.Key())
	}
	if pinned {
		v := req.GetVersion()
		if v < r.min || v > r.max || v > req.MaxVersion() {
			return 0, fmt.Errorf("%w: %s v%d is pinned; the peer serves v%d-%d", ErrUnsupported, name, v, r.min, r.max)
		}
		return v, nil
	}
	v := min(req.MaxVersion(), r.max)
	if v < r.min {
		return 0, fmt.Errorf("%w: %s: we know up to v%d, the peer serves v%d-%d", ErrUnsupported, name, req.MaxVersion(), r.min, r.max)
	}
	return v, nil
}
