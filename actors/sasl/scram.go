package sasl

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// scramConv is the server's side of one SCRAM exchange (RFC 5802 §5):
// client-first in, server-first out; client-final in, server-final out.
// Kafka's two deviations from the RFC are kept, since its clients rely
// on them: the client-final nonce need only end with the server-first
// nonce (librdkafka sends the client nonce twice), and the tokenauth
// extension names a delegation token (refused: samsa has none).
type scramConv struct {
	mech   string
	lookup func(user string) (Credential, bool)
	nonce  func() string // the server's part of the nonce

	step        int // 0: expects client-first; 1: client-final; 2: done
	user        string
	authzID     string
	gs2Header   string // "n,," or "y,a=...,", echoed (base64) in client-final's c=
	clientBare  string // client-first without the GS2 header
	serverFirst string
	fullNonce   string
	cred        Credential
}

// errScram wraps every malformed-message error: the client is told only
// that authentication failed.
var errScram = errors.New("malformed SCRAM message")

// Step takes the client's message and returns the server's; done is set
// with the server-final message, once the client has proved it knows
// the password.
func (s *scramConv) Step(msg string) (out string, done bool, err error) {
	switch s.step {
	case 0:
		s.step = 2 // until it succeeds
		out, err = s.first(msg)
		if err == nil {
			s.step = 1
		}
		return out, false, err
	case 1:
		s.step = 2
		out, err = s.final(msg)
		return out, err == nil, err
	}
	return "", false, errors.New("SCRAM exchange already over")
}

func (s *scramConv) first(msg string) (string, error) {
	// gs2-header: gs2-cbind-flag "," [ authzid ] ","
	flag, rest, ok := strings.Cut(msg, ",")
	if !ok {
		return "", fmt.Errorf("%w: no GS2 header", errScram)
	}
	switch {
	case flag == "n", flag == "y":
	case strings.HasPrefix(flag, "p="):
		return "", errors.New("client asks for channel binding, which a SASL_PLAINTEXT listener cannot give")
	default:
		return "", fmt.Errorf("%w: GS2 channel binding flag %q", errScram, flag)
	}
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return "", fmt.Errorf("%w: GS2 header not terminated", errScram)
	}
	if authz != "" {
		a, ok := strings.CutPrefix(authz, "a=")
		if !ok {
			return "", fmt.Errorf("%w: GS2 authzid", errScram)
		}
		if s.authzID, ok = decodeSaslName(a); !ok {
			return "", fmt.Errorf("%w: authzid encoding", errScram)
		}
	}
	s.gs2Header = msg[:len(msg)-len(bare)]
	s.clientBare = bare
	fields := strings.Split(bare, ",")
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "n=") || !strings.HasPrefix(fields[1], "r=") {
		return "", fmt.Errorf("%w: client-first is not n=<user>,r=<nonce>", errScram)
	}
	if s.user, ok = decodeSaslName(fields[0][2:]); !ok || s.user == "" {
		return "", fmt.Errorf("%w: user name encoding", errScram)
	}
	cnonce := fields[1][2:]
	if !printableNonce(cnonce) {
		return "", fmt.Errorf("%w: client nonce", errScram)
	}
	for _, ext := range fields[2:] {
		if k, v, _ := strings.Cut(ext, "="); k == "tokenauth" && strings.EqualFold(v, "true") {
			return "", errors.New("delegation tokens (tokenauth) are not supported")
		}
	}
	if s.cred, ok = s.lookup(s.user); !ok {
		return "", errors.New("no " + s.mech + " credential for the user")
	}
	s.fullNonce = cnonce + s.nonce()
	s.serverFirst = "r=" + s.fullNonce + ",s=" + base64.StdEncoding.EncodeToString(s.cred.Salt) + ",i=" + strconv.Itoa(s.cred.Iterations)
	return s.serverFirst, nil
}

func (s *scramConv) final(msg string) (string, error) {
	// c=<base64 gs2-header>,r=<nonce>[,extensions],p=<base64 proof>
	cut := strings.LastIndex(msg, ",")
	if cut < 0 {
		return "", fmt.Errorf("%w: client-final has no proof", errScram)
	}
	withoutProof, proofField := msg[:cut], msg[cut+1:]
	fields := strings.Split(withoutProof, ",")
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "c=") || !strings.HasPrefix(fields[1], "r=") || !strings.HasPrefix(proofField, "p=") {
		return "", fmt.Errorf("%w: client-final is not c=<binding>,r=<nonce>,p=<proof>", errScram)
	}
	cbind, err := base64.StdEncoding.DecodeString(fields[0][2:])
	if err != nil || string(cbind) != s.gs2Header {
		return "", fmt.Errorf("%w: channel binding does not echo the GS2 header", errScram)
	}
	if !strings.HasSuffix(fields[1][2:], s.fullNonce) {
		return "", errors.New("client-final nonce does not carry the server's")
	}
	proof, err := base64.StdEncoding.DecodeString(proofField[2:])
	if err != nil {
		return "", fmt.Errorf("%w: proof encoding", errScram)
	}
	h := scramHash(s.mech)
	authMessage := []byte(s.clientBare + "," + s.serverFirst + "," + withoutProof)
	sig := hmac.New(h, s.cred.StoredKey)
	sig.Write(authMessage)
	clientSignature := sig.Sum(nil)
	if len(proof) != len(clientSignature) {
		return "", errors.New("invalid proof")
	}
	clientKey := make([]byte, len(proof))
	subtle.XORBytes(clientKey, proof, clientSignature)
	d := h()
	d.Write(clientKey)
	if subtle.ConstantTimeCompare(d.Sum(nil), s.cred.StoredKey) != 1 {
		return "", errors.New("invalid proof")
	}
	if s.authzID != "" && s.authzID != s.user {
		return "", errors.New("authorization id differs from the user name")
	}
	srv := hmac.New(h, s.cred.ServerKey)
	srv.Write(authMessage)
	return "v=" + base64.StdEncoding.EncodeToString(srv.Sum(nil)), nil
}

// decodeSaslName undoes RFC 5802's escaping of ',' and '=' in names
// (=2C, =3D); any other '=' is malformed.
func decodeSaslName(s string) (string, bool) {
	if !strings.Contains(s, "=") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// printableNonce: RFC 5802's printable ASCII without ','.
func printableNonce(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < 0x21 || n[i] > 0x7e || n[i] == ',' {
			return false
		}
	}
	return true
}

// serverNonce is the server's part of a nonce: letters and digits, as
// Kafka's.
func serverNonce() string { return rand.Text() }
