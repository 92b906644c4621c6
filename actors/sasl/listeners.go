package sasl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Listener is how one SASL listener authenticates.
type Listener struct {
	Name       string
	Mechanisms []string          // enabled, in the configured order
	PlainUsers map[string]string // PLAIN's users, from its JAAS entry
	// Reauth is connections.max.reauth.ms: how long an authenticated
	// session lasts before the client must re-authenticate (KIP-368;
	// 0: for ever).
	Reauth time.Duration
	// OAuth validates OAUTHBEARER tokens, when the listener enables it.
	OAuth *OAuthValidator
}

// Enabled reports whether mech is enabled on the listener.
func (l *Listener) Enabled(mech string) bool { return slices.Contains(l.Mechanisms, mech) }

// Supported are the mechanisms samsa implements.
var Supported = []string{Plain, ScramSHA256, ScramSHA512, OAuthBearer}

// Lookup reads a broker config key ("" when unset); Kafka's
// listener-prefixed keys are asked for by their full name.
type Lookup func(key string) string

// Config keys (Kafka's).
const (
	KeyMechanisms = "sasl.enabled.mechanisms"
	KeyJAAS       = "sasl.jaas.config"
	KeyReauth     = "connections.max.reauth.ms"
)

// ListenerKey is a key's per-listener form,
// listener.name.<listener lowercased>.<key>.
func ListenerKey(listener, key string) string {
	return "listener.name." + strings.ToLower(listener) + "." + key
}

// NewListener reads a SASL listener's settings: its enabled mechanisms
// (listener.name.<l>.sasl.enabled.mechanisms, else
// sasl.enabled.mechanisms, else those with a JAAS entry, see
// configuredMechanisms) and, when PLAIN is enabled, its users from the
// PlainLoginModule entry (listener.name.<l>.plain.sasl.jaas.config, else
// sasl.jaas.config). A mechanism samsa does not implement (GSSAPI,
// Kafka's default) is an error naming the ones it
// does, rather than a listener no client can log in to. OAUTHBEARER
// reads its JWKS endpoint and expected claims (oauthbearer.go).
func NewListener(name string, get Lookup) (*Listener, error) {
	l := &Listener{Name: name}
	mechKey := ListenerKey(name, KeyMechanisms)
	v := get(mechKey)
	if v == "" {
		mechKey, v = KeyMechanisms, get(KeyMechanisms)
	}
	if v == "" {
		mechKey, v = "the JAAS entries", configuredMechanisms(name, get)
	}
	for _, m := range strings.Split(v, ",") {
		if m = strings.TrimSpace(m); m == "" || slices.Contains(l.Mechanisms, m) {
			continue
		}
		if !slices.Contains(Supported, m) {
			return nil, fmt.Errorf("SASL listener %s: %s lists %s; samsa supports %s (set %s)",
				name, mechKey, m, strings.Join(Supported, ", "), ListenerKey(name, KeyMechanisms))
		}
		l.Mechanisms = append(l.Mechanisms, m)
	}
	if len(l.Mechanisms) == 0 {
		return nil, fmt.Errorf("SASL listener %s: no mechanism enabled; set %s to some of %s (Kafka's default, GSSAPI, is not implemented)", name, KeyMechanisms, strings.Join(Supported, ", "))
	}
	reauth := get(ListenerKey(name, KeyReauth))
	if reauth == "" {
		reauth = get(KeyReauth)
	}
	if reauth != "" {
		ms, err := strconv.ParseInt(reauth, 10, 64)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("SASL listener %s: %s=%q is not a number of milliseconds", name, KeyReauth, reauth)
		}
		l.Reauth = time.Duration(ms) * time.Millisecond
	}
	if l.Enabled(Plain) {
		key := ListenerKey(name, strings.ToLower(Plain)+"."+KeyJAAS)
		text := get(key)
		if text == "" {
			key, text = KeyJAAS, get(KeyJAAS)
		}
		if text == "" {
			return nil, fmt.Errorf("SASL listener %s enables PLAIN but has no users: set %s to a PlainLoginModule entry with user_<name>=\"<password>\" options", name, ListenerKey(name, "plain."+KeyJAAS))
		}
		j, err := ParseJAAS(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if !strings.HasSuffix(j.Module, ".PlainLoginModule") {
			return nil, fmt.Errorf("%s: login module %s is not PlainLoginModule; PLAIN reads its users from org.apache.kafka.common.security.plain.PlainLoginModule", key, j.Module)
		}
		l.PlainUsers = j.PlainUsers()
	}
	if l.Enabled(OAuthBearer) {
		v, err := newOAuthValidator(name, get)
		if err != nil {
			return nil, err
		}
		l.OAuth = v
	}
	return l, nil
}

// configuredMechanisms are the mechanisms a listener has a login module
// for, when no sasl.enabled.mechanisms says which: Kafka's default
// (GSSAPI) is not implemented, and a JAAS entry per mechanism is how a
// Kafka operator configures one (listener.name.<l>.<mechanism>.sasl.jaas.config,
// or sasl.jaas.config's module: PlainLoginModule for PLAIN,
// ScramLoginModule for both SCRAM mechanisms).
func configuredMechanisms(listener string, get Lookup) string {
	var out []string
	for _, m := range Supported {
		if get(ListenerKey(listener, strings.ToLower(m)+"."+KeyJAAS)) != "" {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		if j, err := ParseJAAS(get(KeyJAAS)); err == nil {
			switch {
			case strings.HasSuffix(j.Module, ".PlainLoginModule"):
				out = append(out, Plain)
			case strings.HasSuffix(j.Module, ".ScramLoginModule"):
				out = append(out, ScramMechanisms...)
			}
		}
	}
	return strings.Join(out, ",")
}
