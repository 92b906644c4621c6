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
// addresses work), keyed by each address as its unmapped netip.Addr
// prints. Kafka resolves host names once at start; samsa takes
// addresses only, so that a broker's limits do not depend on DNS.
func ParsePerIPOverrides(v string) (map[string]int, error) {
	out := map[string]int{}
	for entry := range strings.SplitSeq(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		i := strings.LastIndex(entry, ":")
		if i < 0 {
			return nil, fmt.Errorf("%q is not <address>:<count>", entry)
		}
		host, count := strings.TrimSpace(entry[:i]), strings.TrimSpace(entry[i+1:])
		a, err := netip.ParseAddr(strings.Trim(host, "[]"))
		if err != nil {
			return nil, fmt.Errorf("%q: %q is not an IP address (host names are not resolved)", entry, host)
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: %q is not a connection count", entry, count)
		}
		out[a.Unmap().String()] = n
	}
	return out, nil
}

func checkPerIPOverrides(v string) error {
	_, err := ParsePerIPOverrides(v)
	return err
}

// ListenerConnectionCreationRates are the listener.name.<l>.max.connection.creation.rate
// set at start, by listener name (upper case, as listeners are named).
func (b *Broker) ListenerConnectionCreationRates() map[string]int64 {
	out := map[string]int64{}
	for k, v := range b.Static {
		listener, ok := strings.CutSuffix(strings.TrimPrefix(k, listenerPrefix), listenerConnectionCreationSuffix)
		if !strings.HasPrefix(k, listenerPrefix) || !ok || strings.Contains(listener, ".") {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[strings.ToUpper(listener)] = n
		}
	}
	return out
}
