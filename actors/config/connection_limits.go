package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Connection limit keys beyond max.connections(.per.ip).
const (
	KeyMaxConnectionCreationRate     = "max.connection.creation.rate"
	KeyMaxConnectionsPerIPOverrides  = "max.connections.per.ip.overrides"
	listenerConnectionCreationSuffix = "." + KeyMaxConnectionCreationRate
)

// ParsePerIPOverrides reads max.connections.per.ip.overrides, Kafka's
// "host:count,host:count" (the count after the last ':', so IPv6
// addresses work). An address is keyed as its unmapped netip.Addr
// prints; a host name is kept as written, for the caller to resolve
// once at start, as Kafka does (ResolvePerIPOverrides).
func ParsePerIPOverrides(v string) (map[string]int, error) {
	out := map[string]int{}
	for entry := range strings.SplitSeq(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		i := strings.LastIndex(entry, ":")
		if i < 0 {
			return nil, fmt.Errorf("%q is not <host>:<count>", entry)
		}
		host, count := strings.Trim(strings.TrimSpace(entry[:i]), "[]"), strings.TrimSpace(entry[i+1:])
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 || host == "" {
			return nil, fmt.Errorf("%q is not <host>:<count>", entry)
		}
		if a, err := netip.ParseAddr(host); err == nil {
			host = a.Unmap().String()
		}
		out[host] = n
	}
	return out, nil
}

// ResolvePerIPOverrides is ParsePerIPOverrides with host names resolved
// (each of their addresses gets the count) through lookup; a name that
// does not resolve is reported in unresolved and left out.
func ResolvePerIPOverrides(v string, lookup func(host string) ([]netip.Addr, error)) (byAddr map[string]int, unresolved []string, err error) {
	parsed, err := ParsePerIPOverrides(v)
	if err != nil {
		return nil, nil, err
	}
	byAddr = map[string]int{}
	for host, n := range parsed {
		if _, err := netip.ParseAddr(host); err == nil {
			byAddr[host] = n
			continue
		}
		addrs, err := lookup(host)
		if err != nil || len(addrs) == 0 {
			unresolved = append(unresolved, host)
			continue
		}
		for _, a := range addrs {
			byAddr[a.Unmap().String()] = n
		}
	}
	return byAddr, unresolved, nil
}

func checkPerIPOverrides(v string) error {
	_, err := ParsePerIPOverrides(v)
	return err
}

// ListenerConnectionCreationRates are the listener.name.<l>.max.connection.creation.rate
// set at start, by listener name (upper case, as listeners are named).
func (b *Broker) ListenerConnectionCreationRates() map[string]int64 {
	return listenerOverrides(b.Layers(), KeyMaxConnectionCreationRate)
}

// ConnectionLimits are the broker's connection limits as the layers
// resolve them (this broker's dynamic configs over the cluster-wide
// default over the static ones): Kafka's dynamic max.connections,
// max.connections.per.ip(.overrides), max.connection.creation.rate and
// their listener overrides. Kafka's "no limit" (Int.MaxValue) is kept as
// read; the caller maps it.
type ConnectionLimits struct {
	MaxConnections int64
	// MaxConnectionsSet is whether a layer sets max.connections (not
	// set, samsa serve derives it from the descriptor limit).
	MaxConnectionsSet   bool
	MaxConnectionsPerIP int64
	// PerIPOverrides is max.connections.per.ip.overrides as written.
	PerIPOverrides string
	CreationRate   int64
	// ListenerMaxConnections and ListenerCreationRates are the
	// listener.name.<l>.max.connections and
	// listener.name.<l>.max.connection.creation.rate a layer sets, by
	// listener name (upper case, as listeners are named).
	ListenerMaxConnections map[string]int64
	ListenerCreationRates  map[string]int64
}

// ConnectionLimitsOf resolves the connection limits over l.
func ConnectionLimitsOf(l Layers) ConnectionLimits {
	get := func(key string) (string, bool) {
		e, _ := ResolveBroker(key, l)
		return e.Value, e.Source != SourceDefault
	}
	var c ConnectionLimits
	v, set := get(KeyMaxConnections)
	c.MaxConnections, c.MaxConnectionsSet = ParseInt(v), set
	v, _ = get(KeyMaxConnectionsPerIP)
	c.MaxConnectionsPerIP = ParseInt(v)
	c.PerIPOverrides, _ = get(KeyMaxConnectionsPerIPOverrides)
	v, _ = get(KeyMaxConnectionCreationRate)
	c.CreationRate = ParseInt(v)
	c.ListenerMaxConnections = listenerOverrides(l, KeyMaxConnections)
	c.ListenerCreationRates = listenerOverrides(l, KeyMaxConnectionCreationRate)
	return c
}

// listenerOverrides are the listener.name.<l>.<key> integer values the
// layers set, the higher layer winning, by upper-case listener name.
func listenerOverrides(l Layers, key string) map[string]int64 {
	out := map[string]int64{}
	for _, layer := range []map[string]string{l.Static, l.DynamicDefault, l.DynamicBroker} {
		for k, v := range layer {
			listener, base, ok := ListenerKey(k)
			if !ok || base != key {
				continue
			}
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				out[strings.ToUpper(listener)] = n
			}
		}
	}
	return out
}

// IsConnectionLimitKey reports whether a change of broker config name
// changes the connection limits (ConnectionLimitsOf): the broker applies
// those live.
func IsConnectionLimitKey(name string) bool {
	switch name {
	case KeyMaxConnections, KeyMaxConnectionsPerIP, KeyMaxConnectionsPerIPOverrides, KeyMaxConnectionCreationRate:
		return true
	}
	_, base, ok := ListenerKey(name)
	return ok && (base == KeyMaxConnections || base == KeyMaxConnectionCreationRate)
}
