package sasl

import (
	"strings"
	"testing"
)

// The client's first OAUTHBEARER message (RFC 7628 section 3.1), as
// franz-go and Kafka's client send it, and malformed ones.
func TestParseOAuthBearer(t *testing.T) {
	valid := map[string][2]string{ // message: token, authzid
		"n,,\x01auth=Bearer abc.def.ghi\x01\x01":       {"abc.def.ghi", ""},
		"n,a=alice,\x01auth=Bearer t\x01ext=1\x01\x01": {"t", "alice"},
		"n,,\x01auth=bearer t\x01\x01":                 {"t", ""},
	}
	for msg, want := range valid {
		token, authzid, err := ParseOAuthBearer([]byte(msg))
		if err != nil || token != want[0] || authzid != want[1] {
			t.Errorf("%q: token %q authzid %q err %v; want %q %q", msg, token, authzid, err, want[0], want[1])
		}
	}
	for _, msg := range []string{"n,,\x01auth=Basic t\x01\x01", "n,,\x01auth=Bearer \x01\x01", "n,,\x01other=1\x01\x01",
		"p=tls,,\x01auth=Bearer t\x01\x01", "n,,auth=Bearer t", "n,b=x,\x01auth=Bearer t\x01\x01", ""} {
		if token, _, err := ParseOAuthBearer([]byte(msg)); err == nil {
			t.Errorf("%q was taken, token %q", msg, token)
		}
	}
}

// Enabling OAUTHBEARER without a JWKS endpoint is refused at start, naming the key.
func TestOAuthBearerNeedsJWKS(t *testing.T) {
	get := func(key string) string {
		if key == KeyMechanisms {
			return "OAUTHBEARER"
		}
		return ""
	}
	if _, err := NewListener("SASL_SSL", get); err == nil || !strings.Contains(err.Error(), KeyJWKSURL) {
		t.Fatalf("NewListener without a JWKS endpoint: %v", err)
	}
}
