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
