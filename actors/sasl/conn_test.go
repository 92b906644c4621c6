package sasl

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"testing"
	"time"
)

// newTestConn is an exchange on a listener enabling every mechanism,
// with PLAIN user alice and store's SCRAM users.
func newTestConn(t *testing.T, store *Store, reauth time.Duration) *Conn {
	t.Helper()
	l := &Listener{Name: "SASL", Mechanisms: Supported, PlainUsers: map[string]string{"alice": "alice-secret"}, Reauth: reauth}
	return &Conn{svc: NewService(map[string]*Listener{"SASL": l}, store), listener: l}
}

// RFC 7677's SCRAM-SHA-256 example, byte for byte, with the server's
// nonce part fixed as in the RFC.
func TestScramRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	salted, err := pbkdf2.Key(sha256.New, "pencil", salt, 4096, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	store := NewStore(Users{"user": {ScramSHA256: NewCredential(ScramSHA256, salt, salted, 4096)}}, nil)
	c := newTestConn(t, store, 0)
	c.svc.nonce = func() string { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0" }
	if f := c.Handshake(ScramSHA256); f != nil {
		t.Fatal(f)
	}
	now := time.Unix(1000, 0)
	out, done, _, f := c.Step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"), now)
	if f != nil || done {
		t.Fatalf("client-first: %v done=%v", f, done)
	}
	if want := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"; string(out) != want {
		t.Fatalf("server-first %q, want %q", out, want)
	}
	if c.Authenticated(now) {
		t.Fatal("authenticated before the proof")
	}
	out, done, user, f := c.Step([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="), now)
	if f != nil || !done || user != "user" {
		t.Fatalf("client-final: %v done=%v user=%q", f, done, user)
	}
	if want := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; string(out) != want {
		t.Fatalf("server-final %q, want %q", out, want)
	}
	if !c.Authenticated(now) {
		t.Fatal("not authenticated after a valid proof")
	}
}

func TestScramWrongProofAndUnknownUser(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	salted, _ := pbkdf2.Key(sha256.New, "other-password", salt, 4096, sha256.Size)
	store := NewStore(Users{"user": {ScramSHA256: NewCredential(ScramSHA256, salt, salted, 4096)}}, nil)
	c := newTestConn(t, store, 0)
	c.svc.nonce = func() string { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0" }
	mustHandshake(t, c, ScramSHA256)
	now := time.Unix(1000, 0)
	if _, _, _, f := c.Step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"), now); f != nil {
		t.Fatal(f)
	}
	_, done, user, f := c.Step([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="), now)
	if f == nil || f.Code != codeAuthFailed || done || user != "user" || c.Authenticated(now) {
		t.Fatalf("wrong password: %v done=%v user=%q", f, done, user)
	}

	c = newTestConn(t, store, 0)
	mustHandshake(t, c, ScramSHA512)
	if _, _, user, f := c.Step([]byte("n,,n=user,r=abc"), now); f == nil || f.Code != codeAuthFailed || user != "user" {
		t.Fatalf("user without a SCRAM-SHA-512 credential: %v", f)
	}
}

func TestPlainExchange(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		msg  string
		ok   bool
		user string
	}{
		{"\x00alice\x00alice-secret", true, "alice"},
		{"alice\x00alice\x00alice-secret", true, "alice"},
		{"bob\x00alice\x00alice-secret", false, ""},
		{"\x00alice\x00wrong", false, "alice"},
		{"\x00mallory\x00", false, ""},
		{"\x00mallory\x00alice-secret", false, "mallory"},
		{"alice-secret", false, ""},
	} {
		c := newTestConn(t, NewStore(nil, nil), 0)
		if f := c.Handshake(Plain); f != nil {
			t.Fatal(f)
		}
		_, done, user, f := c.Step([]byte(tc.msg), now)
		if done != tc.ok || (f == nil) != tc.ok || user != tc.user || c.Authenticated(now) != tc.ok {
			t.Errorf("%q: done=%v user=%q failure=%v", tc.msg, done, user, f)
		}
	}
}

func TestExchangeStates(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newTestConn(t, NewStore(nil, nil), time.Minute)
	if _, _, _, f := c.Step([]byte("\x00alice\x00alice-secret"), now); f == nil || f.Code != codeIllegalState {
		t.Fatalf("authenticate before handshake: %v", f)
	}
	c.listener = &Listener{Name: "SASL", Mechanisms: []string{ScramSHA256}, Reauth: time.Minute}
	if f := c.Handshake(Plain); f == nil || f.Code != codeUnsupportedMechanism {
		t.Fatalf("disabled mechanism: %v", f)
	}
	c.listener.Mechanisms = Supported
	c.listener.PlainUsers = map[string]string{"alice": "a", "bob": "b"}
	mustHandshake(t, c, Plain)
	if _, done, _, _ := c.Step([]byte("\x00alice\x00a"), now); !done {
		t.Fatal("PLAIN failed")
	}
	if got := c.SessionLifetime(now); got != time.Minute {
		t.Fatalf("session lifetime %v, want 1m", got)
	}
	if c.Authenticated(now.Add(time.Minute)) || !c.WasAuthenticated() {
		t.Fatal("the session outlived connections.max.reauth.ms")
	}
	// Re-authentication: the same user renews, another is refused.
	mustHandshake(t, c, Plain)
	if _, done, _, f := c.Step([]byte("\x00alice\x00a"), now.Add(30*time.Second)); !done || f != nil {
		t.Fatalf("re-authentication: %v", f)
	}
	if !c.Authenticated(now.Add(time.Minute)) {
		t.Fatal("re-authentication did not extend the session")
	}
	mustHandshake(t, c, Plain)
	if _, _, _, f := c.Step([]byte("\x00bob\x00b"), now); f == nil || f.Code != codeAuthFailed {
		t.Fatalf("principal change on re-authentication: %v", f)
	}
}

func mustHandshake(t *testing.T, c *Conn, mech string) {
	t.Helper()
	if f := c.Handshake(mech); f != nil {
		t.Fatal(f)
	}
}
