package tlsconf

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"strings"
	"unicode/utf16"
)

// SubjectDN is the certificate's subject in the RFC 2253 form Kafka's
// principals use (Java's X500Principal.getName()): RDNs from the last to
// the first, "CN=alice,OU=eng,O=acme"; the attributes of a multi-valued
// RDN joined by "+"; the keywords CN, C, L, ST, O, OU, STREET, DC and UID,
// and every other attribute as its dotted OID with the DER value in hex
// ("1.2.840.113549.1.9.1=#16..." for an e-mail address), so a principal
// matches what Kafka would print for the same certificate.
func SubjectDN(cert *x509.Certificate) string {
	var seq rdnSequence
	if rest, err := asn1.Unmarshal(cert.RawSubject, &seq); err != nil || len(rest) > 0 {
		return cert.Subject.String() // unreachable for a parsed certificate
	}
	var b strings.Builder
	for i := len(seq) - 1; i >= 0; i-- {
		if i < len(seq)-1 {
			b.WriteByte(',')
		}
		for j, atv := range seq[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAttribute(&b, atv)
		}
	}
	return b.String()
}

// rdnSequence is an X.501 Name with each value kept raw, so that its
// encoding can be printed as is. The SET suffix makes encoding/asn1 read
// a SET OF.
type (
	rdnSequence    []relativeDNSET
	relativeDNSET  []attributeValue
	attributeValue struct {
		Type  asn1.ObjectIdentifier
		Value asn1.RawValue
	}
)

// keywords are the attribute names RFC 2253 (and Java) print by name.
var keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

func writeAttribute(b *strings.Builder, atv attributeValue) {
	oid := atv.Type.String()
	name, known := keywords[oid]
	s, isString := decodeString(atv.Value)
	if !known || !isString {
		if name == "" {
			name = oid
		}
		b.WriteString(name)
		b.WriteString("=#")
		b.WriteString(hex.EncodeToString(atv.Value.FullBytes))
		return
	}
	b.WriteString(name)
	b.WriteByte('=')
	escapeValue(b, s)
}

// decodeString reads a directory string value.
func decodeString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagUTF8String, asn1.TagPrintableString, asn1.TagIA5String, asn1.TagT61String, 26 /* VisibleString */ :
		return string(v.Bytes), true
	case asn1.TagBMPString:
		if len(v.Bytes)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(v.Bytes)/2)
		for i := range u {
			u[i] = uint16(v.Bytes[2*i])<<8 | uint16(v.Bytes[2*i+1])
		}
		return string(utf16.Decode(u)), true
	}
	return "", false
}

// escapeValue writes s with RFC 2253's escapes: the special characters
// anywhere, a leading '#' or space, a trailing space.
func escapeValue(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case strings.IndexByte(",+\"\\<>;=", ch) >= 0,
			ch == '#' && i == 0,
			ch == ' ' && (i == 0 || i == len(s)-1):
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch == 0:
			b.WriteString(`\00`)
		default:
			b.WriteByte(ch)
		}
	}
}
