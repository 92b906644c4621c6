package quota

import (
	"net/netip"
	"testing"
	"time"
)

var (
	addrA = netip.MustParseAddr("10.0.0.1")
	addrB = netip.MustParseAddr("10.0.0.2")
)

func ipQuotas(t *testing.T, cfg Configs) *Manager {
	t.Helper()
	return NewManager(cfg, nil, DefaultWindow, nil)
}

// No rate set: nothing is held, whatever the pace.
func TestConnectionsUnlimited(t *testing.T) {
	c := NewConnections(ipQuotas(t, nil), ConnectionLimits{Broker: 2147483647})
	now := time.Unix(1000, 0)
	for range 1000 {
		if w, d := c.Accepted("PLAINTEXT", addrA, now); w != 0 || d != 0 {
			t.Fatalf("throttled without a limit: wait %v close %v", w, d)
		}
	}
	if got := ipQuotas(t, Configs{{IP: Named("10.0.0.1")}: {KeyConnectionCreationRate: 5}}).Enabled(); got {
		t.Error("an ip quota turned the request path's client quotas on")
	}
}

// An address over its connection_creation_rate has its connection
// refused (closed after a throttle of at most one window) and not
// counted; another address, and the address's own entity over the
// <default>, have their own rates.
func TestConnectionsPerIP(t *testing.T) {
	m := ipQuotas(t, Configs{
		{IP: DefaultPart()}:     {KeyConnectionCreationRate: 2},
		{IP: Named("10.0.0.2")}: {KeyConnectionCreationRate: 100},
	})
	c := NewConnections(m, ConnectionLimits{})
	now := time.Unix(1000, 0)
	// 2/s over the 10 s a young rate spans: the 21st at once is over.
	for i := range 20 {
		if _, d := c.Accepted("PLAINTEXT", addrA, now); d != 0 {
			t.Fatalf("connection %d refused: %v", i+1, d)
		}
	}
	_, d := c.Accepted("PLAINTEXT", addrA, now)
	if d <= 0 || d > time.Second {
		t.Fatalf("21st connection: close after %v, want (0, 1s]", d)
	}
	// Refused connections are not counted: 10.6 s on, 21 over 10.6 s
	// is within 2/s (27 would not be).
	for range 5 {
		if _, d := c.Accepted("PLAINTEXT", addrA, now); d <= 0 {
			t.Fatal("a refused connection made room for another")
		}
	}
	if _, d := c.Accepted("PLAINTEXT", addrA, now.Add(10600*time.Millisecond)); d != 0 {
		t.Fatalf("after 10.6 s: refused (%v)", d)
	}
	for i := range 50 {
		if _, d := c.Accepted("PLAINTEXT", addrB, now); d != 0 {
			t.Fatalf("10.0.0.2 (its own 100/s) refused at %d", i+1)
		}
	}
	mapped := netip.AddrFrom16(addrB.As16())
	if _, d := c.Accepted("PLAINTEXT", mapped, now); d != 0 {
		t.Fatal("the IPv4-mapped form of 10.0.0.2 is not 10.0.0.2")
	}
}

// The broker's and a listener's rates hold accepting (wait) but serve
// the connection; the inter-broker listener is spared the broker's.
func TestConnectionsBrokerAndListener(t *testing.T) {
	c := NewConnections(ipQuotas(t, nil), ConnectionLimits{Broker: 2, Listeners: map[string]float64{"EXTERNAL": 1}, Protected: "INTERNAL"})
	now := time.Unix(1000, 0)
	var waited bool
	for range 25 {
		w, d := c.Accepted("INTERNAL", addrA, now)
		if d != 0 {
			t.Fatal("a broker rate refused a connection")
		}
		waited = waited || w > 0
	}
	if waited {
		t.Fatal("the inter-broker listener was held by the broker's rate")
	}
	var w time.Duration
	for range 11 {
		w, _ = c.Accepted("EXTERNAL", addrA, now)
	}
	if w <= 0 || w > time.Second {
		t.Fatalf("EXTERNAL's 11th connection at 1/s: wait %v, want (0, 1s]", w)
	}
	for range 10 {
		w, _ = c.Accepted("PLAINTEXT", addrA, now)
	}
	if w <= 0 {
		t.Fatal("the broker's 2/s rate did not hold PLAINTEXT after 21 connections")
	}
}

// The rates change live: a rate set later holds the next connections, a
// raised one lets them through at once, and one removed holds nothing.
func TestConnectionsSetLimits(t *testing.T) {
	c := NewConnections(ipQuotas(t, nil), ConnectionLimits{})
	now := time.Unix(1000, 0)
	accept := func(listener string, n int) (w time.Duration) {
		for range n {
			w, _ = c.Accepted(listener, addrA, now)
		}
		return w
	}
	if w := accept("PLAINTEXT", 50); w != 0 {
		t.Fatalf("held without a rate: %v", w)
	}
	c.SetLimits(ConnectionLimits{Broker: 2})
	if w := accept("PLAINTEXT", 21); w <= 0 || w > time.Second {
		t.Fatalf("21 connections at 2/s: wait %v, want (0, 1s]", w)
	}
	c.SetLimits(ConnectionLimits{Broker: 100})
	if w := accept("PLAINTEXT", 1); w != 0 {
		t.Fatalf("22 connections at 100/s: wait %v", w)
	}
	c.SetLimits(ConnectionLimits{Listeners: map[string]float64{"EXTERNAL": 1}})
	if w := accept("PLAINTEXT", 500); w != 0 {
		t.Fatalf("PLAINTEXT held once the broker's rate was removed: %v", w)
	}
	if w := accept("EXTERNAL", 11); w <= 0 {
		t.Fatal("EXTERNAL's new 1/s rate did not hold its 11th connection")
	}
	c.SetLimits(ConnectionLimits{Broker: 2147483647})
	if w := accept("EXTERNAL", 100); w != 0 {
		t.Fatalf("EXTERNAL held once its rate was removed: %v", w)
	}
}
