package sasl

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// Mechanism names, as clients send them in SaslHandshake.
const (
	Plain        = "PLAIN"
	ScramSHA256  = "SCRAM-SHA-256"
	ScramSHA512  = "SCRAM-SHA-512"
	minScramIter = 4096 // Kafka's bounds for stored iterations
	maxScramIter = 16384
)

// ScramMechanisms are the SCRAM mechanisms, in Kafka's type order
// (ScramMechanism: 1 is SHA-256, 2 is SHA-512).
var ScramMechanisms = []string{ScramSHA256, ScramSHA512}

// ScramType is Kafka's numeric id of a SCRAM mechanism (0 unknown).
func ScramType(mech string) int8 {
	for i, m := range ScramMechanisms {
		if m == mech {
			return int8(i + 1)
		}
	}
	return 0
}

// ScramName is the mechanism of Kafka's numeric id ("" unknown).
func ScramName(t int8) string {
	if t < 1 || int(t) > len(ScramMechanisms) {
		return ""
	}
	return ScramMechanisms[t-1]
}

func scramHash(mech string) func() hash.Hash {
	if mech == ScramSHA512 {
		return sha512.New
	}
	return sha256.New
}

// Credential is what the broker keeps of a SCRAM password (RFC 5802 §3):
// enough to verify a client's proof and to prove itself, not enough to
// log in as the user.
type Credential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int
}

// NewCredential derives the stored credential from a salted password
// (Hi(password, salt, i)), which is what AlterUserScramCredentials
// carries: the client salts and hashes, the broker never sees the
// password.
func NewCredential(mech string, salt, saltedPassword []byte, iterations int) Credential {
	h := scramHash(mech)
	mac := func(key []byte, s string) []byte {
		m := hmac.New(h, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	clientKey := mac(saltedPassword, "Client Key")
	d := h()
	d.Write(clientKey)
	return Credential{Salt: salt, StoredKey: d.Sum(nil), ServerKey: mac(saltedPassword, "Server Key"), Iterations: iterations}
}

// String is Kafka's persisted form of the credential
// (ScramCredentialUtils.credentialToString).
func (c Credential) String() string {
	enc := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("salt=%s,stored_key=%s,server_key=%s,iterations=%d", enc(c.Salt), enc(c.StoredKey), enc(c.ServerKey), c.Iterations)
}

// ParseCredential reads Kafka's persisted form back.
func ParseCredential(s string) (Credential, error) {
	var c Credential
	seen := 0
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Credential{}, fmt.Errorf("sasl: credential field %q has no value", k)
		}
		var err error
		switch k {
		case "salt":
			c.Salt, err = base64.StdEncoding.DecodeString(v)
		case "stored_key":
			c.StoredKey, err = base64.StdEncoding.DecodeString(v)
		case "server_key":
			c.ServerKey, err = base64.StdEncoding.DecodeString(v)
		case "iterations":
			c.Iterations, err = strconv.Atoi(v)
		default:
			continue
		}
		if err != nil {
			return Credential{}, fmt.Errorf("sasl: credential field %s: %w", k, err)
		}
		seen++
	}
	if seen != 4 || len(c.StoredKey) == 0 || len(c.ServerKey) == 0 || c.Iterations <= 0 {
		return Credential{}, fmt.Errorf("sasl: credential %q lacks salt, stored_key, server_key or iterations", redact(s))
	}
	return c, nil
}

// redact keeps the field names of a credential string for an error
// message and drops the values.
func redact(s string) string {
	var keys []string
	for _, kv := range strings.Split(s, ",") {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k+"=…")
	}
	return strings.Join(keys, ",")
}
