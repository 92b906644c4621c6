package sasl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// OAUTHBEARER (RFC 7628, Kafka's KIP-255 and KIP-768): the client sends a
// JWT; the broker checks its signature against the keys of a JWKS
// endpoint (sasl.oauthbearer.jwks.endpoint.url), its expiry, and when
// set its issuer and audience, and the principal is User:<sub> (or the
// claim sasl.oauthbearer.sub.claim.name names). The listener's
// listener.name.<l>.oauthbearer.sasl.server.callback.handler.class,
// Kafka's OAuthBearerValidatorCallbackHandler, is accepted as "use
// samsa's validator", whatever class it names: samsa has no unsecured
// validator (Kafka's default, for development only).

// OAuthBearer is the mechanism's name.
const OAuthBearer = "OAUTHBEARER"

// OAUTHBEARER config keys (Kafka's), read listener-prefixed first
// (listener.name.<l>.<key>).
const (
	KeyJWKSURL          = "sasl.oauthbearer.jwks.endpoint.url"
	KeyJWKSRefresh      = "sasl.oauthbearer.jwks.endpoint.refresh.ms"
	KeyExpectedAudience = "sasl.oauthbearer.expected.audience"
	KeyExpectedIssuer   = "sasl.oauthbearer.expected.issuer"
	KeySubClaim         = "sasl.oauthbearer.sub.claim.name"
	KeyClockSkew        = "sasl.oauthbearer.clock.skew.seconds"
)

// jwksRetryAfter is how soon a token signed by a key the set does not
// have may have the set fetched again (a key rotated in at the issuer).
const jwksRetryAfter = 10 * time.Second

// signatureAlgorithms are the JWS algorithms accepted: the asymmetric
// ones a JWKS endpoint publishes keys for.
var signatureAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// OAuthValidator checks OAUTHBEARER tokens against a JWKS endpoint's
// keys. The keys are fetched at start (a listener whose endpoint cannot
// be read does not start, as in Kafka) and again in the background when
// older than the refresh interval or when a token names a key the set
// lacks, so no SaslAuthenticate waits on the endpoint.
type OAuthValidator struct {
	url       string
	audience  []string
	issuer    string
	subClaim  string
	skew      time.Duration
	refresh   time.Duration
	fetchWait time.Duration

	mu       sync.Mutex
	keys     jose.JSONWebKeySet
	fetched  time.Time
	lastMiss time.Time
	fetching bool
}

// newOAuthValidator reads listener's OAUTHBEARER settings and fetches the
// keys once.
func newOAuthValidator(listener string, get Lookup) (*OAuthValidator, error) {
	val := func(key string) string {
		if v := get(ListenerKey(listener, key)); v != "" {
			return v
		}
		return get(key)
	}
	v := &OAuthValidator{url: val(KeyJWKSURL), issuer: val(KeyExpectedIssuer), subClaim: val(KeySubClaim),
		skew: 30 * time.Second, refresh: time.Hour, fetchWait: 10 * time.Second}
	if v.url == "" {
		return nil, fmt.Errorf("SASL listener %s enables OAUTHBEARER: set %s to the JWKS endpoint whose keys sign the tokens (samsa has no unsecured validator)",
			listener, KeyJWKSURL)
	}
	if v.subClaim == "" {
		v.subClaim = "sub"
	}
	for a := range strings.SplitSeq(val(KeyExpectedAudience), ",") {
		if a = strings.TrimSpace(a); a != "" {
			v.audience = append(v.audience, a)
		}
	}
	for key, d := range map[string]*time.Duration{KeyClockSkew: &v.skew, KeyJWKSRefresh: &v.refresh} {
		s := val(key)
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("SASL listener %s: %s=%q is not a non-negative number", listener, key, s)
		}
		if key == KeyClockSkew {
			*d = time.Duration(n) * time.Second
		} else {
			*d = time.Duration(n) * time.Millisecond
		}
	}
	keys, err := v.fetch()
	if err != nil {
		return nil, fmt.Errorf("SASL listener %s: %s: %w", listener, KeyJWKSURL, err)
	}
	v.keys, v.fetched = keys, time.Now()
	return v, nil
}

// fetch reads the key set (http, https or file URL).
func (v *OAuthValidator) fetch() (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	var body []byte
	if path, ok := strings.CutPrefix(v.url, "file://"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return set, err
		}
		body = b
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), v.fetchWait)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.url, nil)
		if err != nil {
			return set, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return set, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return set, fmt.Errorf("GET %s: %s", v.url, resp.Status)
		}
		if body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20)); err != nil {
			return set, err
		}
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return set, fmt.Errorf("not a JWK set: %w", err)
	}
	if len(set.Keys) == 0 {
		return set, errors.New("the JWK set has no keys")
	}
	return set, nil
}

// refreshLocked fetches the keys again in the background, once at a
// time; v.mu is held.
func (v *OAuthValidator) refreshLocked() {
	if v.fetching {
		return
	}
	v.fetching = true
	go func() {
		keys, err := v.fetch()
		v.mu.Lock()
		defer v.mu.Unlock()
		v.fetching = false
		if err == nil {
			v.keys, v.fetched = keys, time.Now()
		}
	}()
}

// key is the public key kid names, nil when the set lacks it (a fetch
// is then started, at most every jwksRetryAfter).
func (v *OAuthValidator) key(kid string, now time.Time) *jose.JSONWebKey {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.refresh > 0 && now.Sub(v.fetched) >= v.refresh {
		v.refreshLocked()
	}
	for i := range v.keys.Keys {
		if k := &v.keys.Keys[i]; kid == "" || k.KeyID == kid {
			return k
		}
	}
	if now.Sub(v.lastMiss) >= jwksRetryAfter {
		v.lastMiss = now
		v.refreshLocked()
	}
	return nil
}

// Validate checks token at now and returns its principal's name and its
// expiry.
func (v *OAuthValidator) Validate(token string, now time.Time) (user string, expires time.Time, err error) {
	tok, err := jwt.ParseSigned(token, signatureAlgorithms)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("malformed JWT: %w", err)
	}
	kid := ""
	if len(tok.Headers) > 0 {
		kid = tok.Headers[0].KeyID
	}
	k := v.key(kid, now)
	if k == nil {
		return "", time.Time{}, fmt.Errorf("no key %q in the JWK set", kid)
	}
	var claims jwt.Claims
	all := map[string]any{}
	if err := tok.Claims(k.Public().Key, &claims, &all); err != nil {
		return "", time.Time{}, fmt.Errorf("signature: %w", err)
	}
	if claims.Expiry == nil {
		return "", time.Time{}, errors.New("the token has no exp claim")
	}
	if err := claims.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, AnyAudience: v.audience, Time: now}, v.skew); err != nil {
		return "", time.Time{}, err
	}
	user, _ = all[v.subClaim].(string)
	if user == "" {
		return "", time.Time{}, fmt.Errorf("the token has no %s claim", v.subClaim)
	}
	return user, claims.Expiry.Time(), nil
}

// ParseOAuthBearer reads the client's first message (RFC 7628 section
// 3.1): the GS2 header (n, with an optional a=<authzid>), then
// \x01-separated key=value pairs, among them auth=Bearer <token>, ended
// by \x01\x01. authzid, when given, must be the token's principal.
func ParseOAuthBearer(msg []byte) (token, authzid string, err error) {
	s := string(msg)
	header, rest, ok := strings.Cut(s, "\x01")
	if !ok || !strings.HasSuffix(rest, "\x01\x01") && rest != "\x01" {
		return "", "", errors.New("invalid OAUTHBEARER client first message")
	}
	gs2 := strings.Split(header, ",")
	if len(gs2) != 3 || gs2[0] != "n" && gs2[0] != "y" || gs2[2] != "" {
		return "", "", errors.New("invalid OAUTHBEARER GS2 header")
	}
	if gs2[1] != "" {
		if authzid, ok = strings.CutPrefix(gs2[1], "a="); !ok {
			return "", "", errors.New("invalid OAUTHBEARER authorization id")
		}
	}
	for kv := range strings.SplitSeq(strings.TrimSuffix(rest, "\x01\x01"), "\x01") {
		if v, ok := strings.CutPrefix(kv, "auth="); ok {
			scheme, t, ok := strings.Cut(v, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(t) == "" {
				return "", "", errors.New("invalid OAUTHBEARER auth value")
			}
			token = strings.TrimSpace(t)
		}
	}
	if token == "" {
		return "", "", errors.New("no auth=Bearer <token> in the OAUTHBEARER message")
	}
	return token, authzid, nil
}
