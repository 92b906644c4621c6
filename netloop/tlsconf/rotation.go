package tlsconf

import (
	"fmt"
	"slices"
	"strings"

	"crypto/x509"
)

// Kafka's keys that let a keystore reload change the certificate's
// identity (both false by default).
const (
	KeyAllowDNChanges  = "ssl.allow.dn.changes"
	KeyAllowSANChanges = "ssl.allow.san.changes"
)

// CheckRotation refuses a new keystore certificate whose subject DN or
// subject alternative names differ from the one served now, unless
// ssl.allow.dn.changes / ssl.allow.san.changes allow it, as Kafka's
// dynamic keystore update does: a rotation renews a listener's
// certificate, it does not quietly make it another host's or principal's.
func CheckRotation(current, next *x509.Certificate, get Getter) error {
	if v, _ := get(KeyAllowDNChanges); !strings.EqualFold(strings.TrimSpace(v), "true") {
		if a, b := SubjectDN(current), SubjectDN(next); a != b {
			return fmt.Errorf("the new certificate's subject %q is not the current one's, %q (set %s=true to allow it)", b, a, KeyAllowDNChanges)
		}
	}
	if v, _ := get(KeyAllowSANChanges); !strings.EqualFold(strings.TrimSpace(v), "true") {
		if a, b := altNames(current), altNames(next); !slices.Equal(a, b) {
			return fmt.Errorf("the new certificate's subject alternative names %v are not the current one's, %v (set %s=true to allow it)", b, a, KeyAllowSANChanges)
		}
	}
	return nil
}

// altNames are a certificate's subject alternative names, sorted.
func altNames(c *x509.Certificate) []string {
	var out []string
	for _, n := range c.DNSNames {
		out = append(out, "DNS:"+n)
	}
	for _, ip := range c.IPAddresses {
		out = append(out, "IP:"+ip.String())
	}
	for _, e := range c.EmailAddresses {
		out = append(out, "email:"+e)
	}
	for _, u := range c.URIs {
		out = append(out, "URI:"+u.String())
	}
	slices.Sort(out)
	return out
}
