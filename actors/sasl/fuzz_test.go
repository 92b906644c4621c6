package sasl

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"testing"
	"time"
)

// The SASL parsers read bytes from unauthenticated clients: none may
// panic, and none may authenticate without the password.

func FuzzPlainExchange(f *testing.F) {
	f.Add([]byte("\x00alice\x00alice-secret"))
	f.Add([]byte("alice\x00alice\x00wrong"))
	f.Add([]byte("\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		if m, err := ParsePlain(msg); err == nil && (m.User == "" || m.Password == "") {
			t.Fatalf("accepted %q with an empty user or password", msg)
		}
		c := newTestConn(t, NewStore(nil, nil), 0)
		mustHandshake(t, c, Plain)
		_, done, user, _ := c.Step(msg, time.Unix(0, 0))
		if done && (user != "alice" || string(msg[len(msg)-len("alice-secret"):]) != "alice-secret") {
			t.Fatalf("%q authenticated as %q", msg, user)
		}
	})
}

// FuzzScramExchange drives a SCRAM-SHA-256 exchange with arbitrary
// client-first and client-final messages.
func FuzzScramExchange(f *testing.F) {
	f.Add("n,,n=user,r=rOprNGfwEbeRWgbNEkqO", "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	f.Add("y,a=user,n=user,r=x", "c=eSxhPXVzZXIs,r=x,p=AAAA")
	f.Add("p=tls-unique,,n=us=3Der,r=1", "c=,r=,p=")
	f.Add("n,,n=user,r=abc,ext=1", "")
	salt := []byte("salt-of-sixteen!")
	salted, err := pbkdf2.Key(sha256.New, "pencil", salt, 4096, sha256.Size)
	if err != nil {
		f.Fatal(err)
	}
	store := NewStore(Users{"user": {ScramSHA256: NewCredential(ScramSHA256, salt, salted, 4096)}}, nil)
	f.Fuzz(func(t *testing.T, first, final string) {
		c := newTestConn(t, store, 0)
		mustHandshake(t, c, ScramSHA256)
		now := time.Unix(0, 0)
		_, done, _, fail := c.Step([]byte(first), now)
		if done {
			t.Fatalf("authenticated on the client-first message %q", first)
		}
		if fail != nil {
			return
		}
		// The server's nonce is random: a fuzzed final cannot carry it,
		// so it must never authenticate.
		if _, done, _, _ := c.Step([]byte(final), now); done {
			t.Fatalf("authenticated with a guessed client-final %q", final)
		}
	})
}

func FuzzParseJAAS(f *testing.F) {
	f.Add(`org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b\"c";`)
	f.Add(`x required a=b; y`)
	f.Fuzz(func(t *testing.T, s string) {
		j, err := ParseJAAS(s)
		if err == nil && (j.Module == "" || j.Options == nil) {
			t.Fatalf("%q parsed to %+v", s, j)
		}
	})
}

func FuzzParseCredential(f *testing.F) {
	f.Add(NewCredential(ScramSHA256, []byte("s"), []byte("p"), 4096).String())
	f.Add("salt=,stored_key=,server_key=,iterations=0")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCredential(s)
		if err != nil {
			return
		}
		back, err := ParseCredential(c.String())
		if err != nil || back.String() != c.String() {
			t.Fatalf("%q: %q does not round-trip: %v", s, c.String(), err)
		}
	})
}
