package config

import "strings"

// servedProtocols are the security protocols of the listeners samsa
// serves: SSL and SASL_SSL ones over TLS (netloop/tlsconf reads their
// ssl.* keys), SASL_PLAINTEXT and SASL_SSL ones authenticating their
// clients (actors/sasl).
var servedProtocols = map[string]bool{"PLAINTEXT": true, "SSL": true, "SASL_PLAINTEXT": true, "SASL_SSL": true}

// TLSProtocol reports whether a listener of this security protocol runs
// over TLS (SSL, SASL_SSL).
func TLSProtocol(protocol string) bool { return protocol == "SSL" || protocol == "SASL_SSL" }

// staticDef is the def a key set at start (file, environment, flags)
// follows: its own, or for a listener override,
// listener.name.<listener>.<key>, the def of the key it overrides (so
// listener.name.ssl.ssl.keystore.location is checked and kept like
// ssl.keystore.location). Overrides of unknown keys stay unknown.
func staticDef(name string) (*Def, bool) {
	if d, ok := BrokerDef(name); ok {
		return d, true
	}
	if _, base, ok := ListenerKey(name); ok {
		return BrokerDef(base)
	}
	return nil, false
}

// ListenerValue is key's value for one listener: its static override,
// listener.name.<listener lowercased>.<key>, when set, else the key's
// effective value. from is the key the value was found under, for error
// messages.
func (b *Broker) ListenerValue(listener, key string) (value, from string) {
	override := listenerPrefix + strings.ToLower(listener) + "." + key
	if v, ok := b.Static[override]; ok {
		return v, override
	}
	return b.Value(key), key
}
