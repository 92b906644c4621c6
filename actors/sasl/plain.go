package sasl

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
)

// PlainMessage is a decoded PLAIN client message (RFC 4616).
type PlainMessage struct {
	AuthzID, User, Password string
}

// ErrPlainFormat is returned for a PLAIN message that is not
// authzid NUL authcid NUL password with a user name and a password.
var ErrPlainFormat = errors.New("invalid SASL/PLAIN message: expected authzid NUL username NUL password")

// ParsePlain decodes a PLAIN client message. The authorization id, when
// given, must be the user name: Kafka has no impersonation.
func ParsePlain(msg []byte) (PlainMessage, error) {
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 || len(parts[1]) == 0 || len(parts[2]) == 0 {
		return PlainMessage{}, ErrPlainFormat
	}
	m := PlainMessage{AuthzID: string(parts[0]), User: string(parts[1]), Password: string(parts[2])}
	if m.AuthzID != "" && m.AuthzID != m.User {
		return PlainMessage{}, errors.New("authorization id differs from the user name")
	}
	return m, nil
}

// plainCheck reports whether password is users[user]. Both sides are
// hashed first so that the comparison takes the same time whatever the
// lengths, and an unknown user costs what a known one does.
func plainCheck(users map[string]string, user, password string) bool {
	want, known := users[user]
	a, b := sha256.Sum256([]byte(password)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1 && known
}
