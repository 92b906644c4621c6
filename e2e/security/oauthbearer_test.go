package security

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// issuer signs JWTs with an RSA key whose public half its JWKS endpoint
// (an httptest server) publishes.
type issuer struct {
	key *rsa.PrivateKey
	kid string
	srv *httptest.Server
}

func newIssuer(t *testing.T, kid string) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key, kid: kid}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig"}}}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

// token is a JWT for sub with claims c (sub, and exp an hour on, unless c sets them).
func (is *issuer) token(t *testing.T, sub string, c jwt.Claims) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: is.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", is.kid))
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject == "" {
		c.Subject = sub
	}
	if c.Expiry == nil {
		c.Expiry = jwt.NewNumericDate(time.Now().Add(time.Hour))
	}
	s, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func oauthMech(token string) oauth.Auth { return oauth.Auth{Token: token} }

// OAUTHBEARER with JWKS validation, as Kafka's
// OAuthBearerValidatorCallbackHandler does it: franz-go's oauth mechanism
// logs in with a JWT signed by a key of the JWKS endpoint, with the
// expected issuer and audience; the principal is User:<sub> (ACLs see
// it). A token with another audience, an expired one, one signed by a
// key the endpoint does not publish are refused with
// SASL_AUTHENTICATION_FAILED and one log line each.
func TestOAuthBearerWithJWKS(t *testing.T) {
	is, stranger := newIssuer(t, "k1"), newIssuer(t, "k2")
	b := startSASLBroker(t, "sasl.enabled.mechanisms", "PLAIN,OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class",
		"org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url", is.srv.URL,
		"sasl.oauthbearer.expected.audience", "samsa",
		"sasl.oauthbearer.expected.issuer", "https://issuer.test",
		"authorizer.class.name", aclAuthorizer, "super.users", "User:"+adminUser+";User:alice")
	good := jwt.Claims{Issuer: "https://issuer.test", Audience: jwt.Audience{"samsa"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	alice := kadm.NewClient(client(t, b.saslAddr(), oauthMech(is.token(t, "alice", good)).AsMechanism()))
	if res, err := alice.CreateTopic(ctx, 1, 1, nil, "alices"); err != nil || res.Err != nil {
		t.Fatalf("alice (a super user) creating a topic over OAUTHBEARER: %v %v", err, res.Err)
	}
	bob := kadm.NewClient(client(t, b.saslAddr(), oauthMech(is.token(t, "bob", good)).AsMechanism()))
	if res, err := bob.CreateTopic(ctx, 1, 1, nil, "bobs"); err == nil && res.Err == nil {
		t.Fatal("bob, authenticated but without ACLs, created a topic")
	}
	if len(b.log.Matching("operation denied by ACLs", "principal=User:bob")) == 0 {
		t.Error("bob's denial does not name User:bob")
	}

	expired := good
	expired.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Hour))
	wrongAudience := good
	wrongAudience.Audience = jwt.Audience{"someone-else"}
	refused := map[string]string{
		"wrong audience": is.token(t, "carol", wrongAudience),
		"expired":        is.token(t, "carol", expired),
		"unknown key":    stranger.token(t, "carol", good),
		"not a JWT":      "not-a-jwt",
	}
	for what, tok := range refused {
		err := client(t, b.saslAddr(), oauthMech(tok).AsMechanism()).Ping(ctx)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s token: %v, want SASL_AUTHENTICATION_FAILED", what, err)
		}
	}
	if lines := b.log.Matching("SASL authentication failed", "mechanism=OAUTHBEARER"); len(lines) != len(refused) {
		t.Errorf("%d failed-authentication lines for %d refused tokens", len(lines), len(refused))
	}
	// The broker still serves everyone else.
	if err := client(t, b.saslAddr(), plainMech(adminUser, adminPass)).Ping(ctx); err != nil {
		t.Fatalf("admin over PLAIN: %v", err)
	}
}
