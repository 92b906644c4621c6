package tlsconf

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
)

// Subject DNs print as Kafka prints them (RFC 2253, last RDN first, the
// RFC's keywords, other attributes as OID=#hex), escapes included.
func TestSubjectDN(t *testing.T) {
	ca := tlstest.NewCA(t)
	email := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	for _, tc := range []struct {
		name pkix.Name
		want string
	}{
		{pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}}, "CN=alice,OU=eng,O=acme"},
		{pkix.Name{CommonName: "bob", Country: []string{"DE"}, Locality: []string{"Berlin"}, Province: []string{"BE"}}, "CN=bob,L=Berlin,ST=BE,C=DE"},
		{pkix.Name{CommonName: "Smith, John+1 <x>;\"q\"=\\"}, `CN=Smith\, John\+1 \<x\>\;\"q\"\=\\`},
		{pkix.Name{CommonName: " #lead trail "}, `CN=\ #lead trail\ `},
		{pkix.Name{CommonName: "#x"}, `CN=\#x`},
		{pkix.Name{CommonName: "carol", ExtraNames: []pkix.AttributeTypeAndValue{{Type: email, Value: "c@x.io"}}}, "1.2.840.113549.1.9.1=#0c066340782e696f,CN=carol"}, // Go writes it as a UTF8String (tag 0c)
	} {
		got := SubjectDN(ca.Client(t, tc.name).Leaf)
		if got != tc.want {
			t.Errorf("SubjectDN(%v) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
