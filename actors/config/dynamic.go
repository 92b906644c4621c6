package config

import (
	"fmt"
	"slices"
	"strings"
)

// Dynamic broker configs follow Kafka's DynamicBrokerConfig rules: a key
// may be set at runtime only when its def is Dynamic; ListenerOnly keys
// only as a listener override, listener.name.<listener>.<key>; PerBroker
// keys and listener overrides only on one broker, not as the cluster-wide
// default (except the connection and thread limits).

const listenerPrefix = "listener.name."

// listenerMechanismKeys are overridden per listener and SASL mechanism:
// listener.name.<listener>.<mechanism>.<key>.
var listenerMechanismKeys = []string{"sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.login.class",
	"sasl.server.callback.handler.class", "connections.max.reauth.ms"}

// clusterLevelListenerKeys may be overridden per listener in the
// cluster-wide default too.
var clusterLevelListenerKeys = []string{KeyMaxConnections, "max.connection.creation.rate", KeyNetworkThreads}

// ListenerKey splits a listener override, listener.name.<listener>.<key>,
// into the listener and the key it overrides (for the SASL mechanism keys,
// the key without the mechanism).
func ListenerKey(name string) (listener, base string, ok bool) {
	rest, ok := strings.CutPrefix(name, listenerPrefix)
	if !ok {
		return "", "", false
	}
	listener, base, ok = strings.Cut(rest, ".")
	if !ok || base == "" {
		return "", "", false
	}
	for _, k := range listenerMechanismKeys {
		if strings.HasSuffix(base, k) {
			return listener, k, true
		}
	}
	return listener, base, true
}

// DynamicBrokerDef is the def a dynamic broker config follows: its own, or
// for a listener override the def of the key it overrides, which may be
// nil (an override of a key samsa does not know: Kafka accepts those,
// unchecked). ok is false for an unknown key.
func DynamicBrokerDef(name string) (def *Def, override, ok bool) {
	if d, ok := BrokerDef(name); ok {
		return d, false, true
	}
	if _, base, ok := ListenerKey(name); ok {
		d, _ := BrokerDef(base)
		return d, true, true
	}
	return nil, false, false
}

// DynamicKeyError is a set of keys Kafka refuses to change dynamically,
// with its reason, in Kafka's words.
type DynamicKeyError struct {
	Reason string
	Keys   []string
}

func (e *DynamicKeyError) Error() string {
	return fmt.Sprintf("%s: Set(%s)", e.Reason, strings.Join(e.Keys, ", "))
}

// CheckDynamicBroker checks that keys may be set at runtime on a BROKER
// resource (the cluster-wide default when clusterDefault), in the order of
// Kafka's checks: keys that are not dynamic, security keys without a
// listener prefix, per-broker keys as a cluster-wide default. Each failing
// check refuses its keys as one *DynamicKeyError. Unknown keys are the
// caller's to refuse.
func CheckDynamicBroker(keys []string, clusterDefault bool) error {
	var readOnly, needListener, perBroker []string
	for _, k := range keys {
		d, override, ok := DynamicBrokerDef(k)
		switch {
		case !ok:
		case !override && !d.Dynamic:
			readOnly = append(readOnly, k)
		case !override && d.ListenerOnly:
			needListener = append(needListener, k)
		case clusterDefault && !override && d.PerBroker:
			perBroker = append(perBroker, k)
		case clusterDefault && override:
			if _, base, _ := ListenerKey(k); !slices.Contains(clusterLevelListenerKeys, base) {
				perBroker = append(perBroker, k)
			}
		}
	}
	for _, c := range []struct {
		keys   []string
		reason string
	}{
		{readOnly, "Cannot update these configs dynamically"},
		{needListener, "These security configs can be dynamically updated only per-listener using the listener prefix"},
		{perBroker, "Cannot update these configs at default cluster level, broker id must be specified"},
	} {
		if len(c.keys) > 0 {
			slices.Sort(c.keys)
			return &DynamicKeyError{Reason: c.reason, Keys: slices.Compact(c.keys)}
		}
	}
	return nil
}
