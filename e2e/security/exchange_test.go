package security

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The exchange's edges on the wire: what a client that breaks the order
// gets, and that the connection is then closed.
func TestExchangeOutOfOrder(t *testing.T) {
	b := startSASLBroker(t)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 1

	// ApiVersions is served before authentication, Metadata closes.
	c := dialRaw(t, b.saslAddr())
	if err := c.call(kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrApiVersionsResponse()); err != nil {
		t.Fatalf("ApiVersions before authentication: %v", err)
	}
	if err := c.call(md, kmsg.NewPtrMetadataResponse()); err == nil {
		t.Fatal("Metadata answered before authentication")
	}

	// SaslAuthenticate without a handshake: ILLEGAL_SASL_STATE, closed.
	c = dialRaw(t, b.saslAddr())
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte("\x00alice\x00alice-secret")
	authResp := kmsg.NewPtrSASLAuthenticateResponse()
	if err := c.call(auth, authResp); err != nil || authResp.ErrorCode != 34 {
		t.Fatalf("SaslAuthenticate before SaslHandshake: %v code %d, want ILLEGAL_SASL_STATE (34)", err, authResp.ErrorCode)
	}
	if err := c.call(kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrApiVersionsResponse()); err == nil {
		t.Fatal("the connection stayed open after ILLEGAL_SASL_STATE")
	}

	// Handshake v0 (unframed tokens would follow): answered, closed,
	// logged.
	c = dialRaw(t, b.saslAddr())
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 0, "PLAIN"
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	if err := c.call(hs, hsResp); err != nil || hsResp.ErrorCode == 0 || len(hsResp.SupportedMechanisms) != 3 {
		t.Fatalf("SaslHandshake v0: %v %+v", err, hsResp)
	}
	if err := c.call(kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrApiVersionsResponse()); err == nil {
		t.Fatal("the connection stayed open after SaslHandshake v0")
	}
	if len(b.log.Matching("SASL handshake v0")) != 1 {
		t.Fatalf("want one log line for SaslHandshake v0; log:\n%v", b.log.Matching())
	}

	// An unknown mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled
	// ones, closed.
	c = dialRaw(t, b.saslAddr())
	hs.Version, hs.Mechanism = 1, "GSSAPI"
	hsResp = kmsg.NewPtrSASLHandshakeResponse()
	if err := c.call(hs, hsResp); err != nil || hsResp.ErrorCode != 33 || len(hsResp.SupportedMechanisms) != 3 {
		t.Fatalf("SaslHandshake GSSAPI: %v %+v", err, hsResp)
	}
	if err := c.call(kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrApiVersionsResponse()); err == nil {
		t.Fatal("the connection stayed open after UNSUPPORTED_SASL_MECHANISM")
	}
}
