package tlsconf

import (
	"crypto/x509/pkix"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
)

// A reload may renew the certificate (same subject and names, new key
// and serial) but not change whose it is, unless the allow keys say so.
func TestCheckRotation(t *testing.T) {
	ca := tlstest.NewCA(t)
	current, renewed := ca.Server(t), ca.Server(t)
	other := ca.Broker(t, pkix.Name{CommonName: "other"})
	none := settings{}
	if err := CheckRotation(current.Leaf, renewed.Leaf, none.get); err != nil {
		t.Fatalf("renewal refused: %v", err)
	}
	err := CheckRotation(current.Leaf, other.Leaf, none.get)
	if err == nil || !strings.Contains(err.Error(), KeyAllowDNChanges) || !strings.Contains(err.Error(), "CN=other") {
		t.Fatalf("another subject: %v", err)
	}
	if err := CheckRotation(current.Leaf, other.Leaf, settings{KeyAllowDNChanges: "true"}.get); err != nil {
		t.Fatalf("another subject, allowed: %v", err)
	}
	// Same subject, other names.
	elsewhere := ca.Broker(t, current.Leaf.Subject)
	elsewhere.Leaf.DNSNames = []string{"broker.example"}
	if err := CheckRotation(current.Leaf, elsewhere.Leaf, none.get); err == nil || !strings.Contains(err.Error(), KeyAllowSANChanges) {
		t.Fatalf("other names: %v", err)
	}
	if err := CheckRotation(current.Leaf, elsewhere.Leaf, settings{KeyAllowSANChanges: "true"}.get); err != nil {
		t.Fatalf("other names, allowed: %v", err)
	}
}
