package config

import (
	"errors"
	"maps"
	"net/netip"
	"testing"
)

// max.connections.per.ip.overrides in Kafka's syntax: addresses
// (IPv6 and IPv4-mapped too) and host names, resolved once by the
// caller; a name that does not resolve is left out and reported.
func TestPerIPOverrides(t *testing.T) {
	lookup := func(host string) ([]netip.Addr, error) {
		if host == "db.example" {
			return []netip.Addr{netip.MustParseAddr("10.1.0.1"), netip.MustParseAddr("::ffff:10.1.0.2")}, nil
		}
		return nil, errors.New("no such host")
	}
	got, unresolved, err := ResolvePerIPOverrides(" 10.0.0.1:5, ::1:7,[fe80::2]:0 ,::ffff:10.0.0.3:9,db.example:3,gone.example:1", lookup)
	want := map[string]int{"10.0.0.1": 5, "::1": 7, "fe80::2": 0, "10.0.0.3": 9, "10.1.0.1": 3, "10.1.0.2": 3}
	if err != nil || !maps.Equal(got, want) || len(unresolved) != 1 || unresolved[0] != "gone.example" {
		t.Fatalf("got %v, unresolved %v, err %v; want %v", got, unresolved, err, want)
	}
	for _, bad := range []string{"10.0.0.1", "10.0.0.1:x", "10.0.0.1:-1", ":4"} {
		if err := checkPerIPOverrides(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := checkPerIPOverrides(""); err != nil {
		t.Errorf("empty: %v", err)
	}
}

// listener.name.<l>.max.connection.creation.rate is read per listener,
// by its upper-case name.
func TestListenerConnectionCreationRates(t *testing.T) {
	b := &Broker{Static: map[string]string{
		"listener.name.external.max.connection.creation.rate": "20",
		"listener.name.internal.max.connections":              "5",
		"max.connection.creation.rate":                        "50",
	}}
	if got := b.ListenerConnectionCreationRates(); !maps.Equal(got, map[string]int64{"EXTERNAL": 20}) {
		t.Fatalf("rates %v", got)
	}
}
