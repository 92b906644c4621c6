package sasl

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/base64"
	"strings"
	"testing"
)

// scramClient computes a client-final message for the exchange so far
// (RFC 5802 §3), with nonce as the client-final's r= value.
func scramClientFinal(t *testing.T, salted []byte, gs2, clientBare, serverFirst, nonce string) string {
	t.Helper()
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha512.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte(gs2)) + ",r=" + nonce
	clientKey := mac(salted, "Client Key")
	h := sha512.Sum512(clientKey)
	sig := mac(h[:], clientBare+","+serverFirst+","+withoutProof)
	proof := make([]byte, len(sig))
	for i := range sig {
		proof[i] = clientKey[i] ^ sig[i]
	}
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)
}

func scramFixture(t *testing.T, user string) (*scramConv, []byte) {
	t.Helper()
	salt := []byte("0123456789abcdef")
	salted, err := pbkdf2.Key(sha512.New, "secret", salt, 4096, sha512.Size)
	if err != nil {
		t.Fatal(err)
	}
	cred := NewCredential(ScramSHA512, salt, salted, 4096)
	return &scramConv{mech: ScramSHA512, nonce: func() string { return "SERVER" },
		lookup: func(u string) (Credential, bool) { return cred, u == user }}, salted
}

// librdkafka's client-final repeats the client nonce before the
// server-first nonce; Kafka accepts a nonce that ends with the
// server's, and so must samsa.
func TestScramLibrdkafkaNonce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nonce func(full string) string
		ok    bool
	}{
		{"exact", func(full string) string { return full }, true},
		{"librdkafka", func(full string) string { return "cnonce" + full }, true},
		{"client part only", func(string) string { return "cnonce" }, false},
		{"other server nonce", func(string) string { return "cnonceOTHER" }, false},
	} {
		s, salted := scramFixture(t, "a,b=c")
		first, done, err := s.Step("n,,n=a=2Cb=3Dc,r=cnonce")
		if err != nil || done || first != "r=cnonceSERVER,s=MDEyMzQ1Njc4OWFiY2RlZg==,i=4096" {
			t.Fatalf("%s: server-first %q %v", tc.name, first, err)
		}
		final := scramClientFinal(t, salted, "n,,", "n=a=2Cb=3Dc,r=cnonce", first, tc.nonce("cnonceSERVER"))
		out, done, err := s.Step(final)
		if done != tc.ok || (err == nil) != tc.ok || (tc.ok && !strings.HasPrefix(out, "v=")) {
			t.Errorf("%s: done=%v err=%v out=%q", tc.name, done, err, out)
		}
		if s.user != "a,b=c" {
			t.Errorf("%s: user %q, want the decoded name", tc.name, s.user)
		}
	}
}

func TestScramClientFirstRefusals(t *testing.T) {
	for _, msg := range []string{
		"",
		"n",
		"p=tls-unique,,n=u,r=x",     // channel binding
		"x,,n=u,r=x",                // flag
		"n,,r=x,n=u",                // order
		"n,,n=u=2X,r=x",             // name escape
		"n,,n=,r=x",                 // no name
		"n,,n=u,r=",                 // no nonce
		"n,,n=u,r=a b",              // nonce not printable
		"n,,n=u,r=x,tokenauth=true", // delegation token
		"n,,n=nobody,r=x",           // unknown user
		"n,a=other,n=u,r=x,",        // authzid accepted here, refused at the end
	} {
		s, _ := scramFixture(t, "u")
		_, _, err := s.Step(msg)
		if msg == "n,a=other,n=u,r=x," {
			if err != nil || s.authzID != "other" {
				t.Errorf("%q: %v", msg, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q accepted", msg)
		}
	}
}

func TestScramAuthzIDMustBeUser(t *testing.T) {
	s, salted := scramFixture(t, "u")
	first, _, err := s.Step("n,a=other,n=u,r=c")
	if err != nil {
		t.Fatal(err)
	}
	if _, done, err := s.Step(scramClientFinal(t, salted, "n,a=other,", "n=u,r=c", first, "cSERVER")); done || err == nil {
		t.Fatal("an authorization id other than the user was accepted")
	}
	s, salted = scramFixture(t, "u")
	first, _, _ = s.Step("y,a=u,n=u,r=c")
	if _, done, err := s.Step(scramClientFinal(t, salted, "y,a=u,", "n=u,r=c", first, "cSERVER")); !done || err != nil {
		t.Fatalf("authzid equal to the user: %v", err)
	}
	// The c= field must echo the GS2 header.
	s, salted = scramFixture(t, "u")
	first, _, _ = s.Step("n,,n=u,r=c")
	if _, done, _ := s.Step(scramClientFinal(t, salted, "y,,", "n=u,r=c", first, "cSERVER")); done {
		t.Fatal("a client-final with another GS2 header was accepted")
	}
}
