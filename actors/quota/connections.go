package quota

import (
	"maps"
	"math"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Connections is the broker's connection creation quotas, Kafka's
// ConnectionQuotas (KIP-612): max.connection.creation.rate for the
// broker and per listener (listener.name.<l>.max.connection.creation.rate)
// and connection_creation_rate per client address (ip entities, set with
// AlterClientQuotas).
//
// Over the broker's or a listener's rate, the listener stops accepting
// for the throttle time (its next connections wait in the backlog), as
// Kafka's acceptor does; the connection that went over is served. Over
// an address's rate, that connection is not served: it is held unread
// and closed after the throttle time, and counted in no rate (Kafka
// un-records it). Both throttles are bounded by one quota window, as
// Kafka bounds them. The inter-broker listener is exempt from the
// broker-wide rate when there are several listeners, as in Kafka.
//
// Accepted is called once per accepted connection by netloop's accept
// goroutines, off the event loops; with no rate set it costs two loads.
// The rates change live (SetLimits), as Kafka's dynamic
// max.connection.creation.rate does.
type Connections struct {
	m      *Manager
	window Window
	// limited is whether a broker or listener rate is set: the fast path
	// for a broker without one.
	limited atomic.Bool

	mu            sync.Mutex
	broker        float64            // connections/s; 0: none
	listeners     map[string]float64 // by listener name
	protected     string             // exempt from the broker's rate
	brokerRate    *rate
	listenerRates map[string]*rate
	ipRates       map[netip.Addr]*ipRate
	lastSweep     time.Time
}

type ipRate struct {
	r    *rate
	last time.Time
}

// ConnectionLimits are the broker's connection creation rates, in
// connections per second; 0 (or Kafka's Int.MaxValue default) is none.
type ConnectionLimits struct {
	Broker    float64
	Listeners map[string]float64
	// Protected is the inter-broker listener when the broker has more
	// than one listener ("" otherwise): the broker's rate spares it.
	Protected string
}

// NewConnections applies limits and the ip quotas of m.
func NewConnections(m *Manager, limits ConnectionLimits) *Connections {
	c := &Connections{m: m, window: m.window, listenerRates: map[string]*rate{}, ipRates: map[netip.Addr]*ipRate{}}
	c.SetLimits(limits)
	return c
}

// SetLimits replaces the broker's and the listeners' rates. A rate that
// stays keeps what it has measured, so a changed bound applies at once
// to the current window; a new one starts empty.
func (c *Connections) SetLimits(limits ConnectionLimits) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.broker, c.protected = unlimitedZero(limits.Broker), limits.Protected
	c.listeners = map[string]float64{}
	for l, v := range limits.Listeners {
		if v = unlimitedZero(v); v > 0 {
			c.listeners[l] = v
		}
	}
	switch {
	case c.broker == 0:
		c.brokerRate = nil
	case c.brokerRate == nil:
		c.brokerRate = newRate(c.window)
	}
	maps.DeleteFunc(c.listenerRates, func(l string, _ *rate) bool { return c.listeners[l] == 0 })
	for l := range c.listeners {
		if c.listenerRates[l] == nil {
			c.listenerRates[l] = newRate(c.window)
		}
	}
	c.limited.Store(c.broker > 0 || len(c.listeners) > 0)
}

// unlimitedZero maps Kafka's "no limit" (Int.MaxValue) to 0.
func unlimitedZero(v float64) float64 {
	if v >= math.MaxInt32 || v < 0 {
		return 0
	}
	return v
}

// Accepted records a connection from ip accepted on listener at now.
// wait is how long the listener should stop accepting (the broker's or
// the listener's rate); closeAfter, when positive, says the connection
// is over its address's rate: hold it unread and close it after that.
func (c *Connections) Accepted(listener string, ip netip.Addr, now time.Time) (wait, closeAfter time.Duration) {
	ips := c.m.ips.Load()
	ip = ip.Unmap()
	if !c.limited.Load() && ips == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	brokerRate := c.brokerRate
	if listener == c.protected {
		brokerRate = nil
	}
	if brokerRate != nil {
		wait = c.record(brokerRate, c.broker, 1, now)
	}
	lr := c.listenerRates[listener]
	if lr != nil {
		wait = max(wait, c.record(lr, c.listeners[listener], 1, now))
	}
	bound, ok := ips.lookup(ip)
	if !ok {
		return wait, 0
	}
	c.sweep(now)
	ir := c.ipRates[ip]
	if ir == nil {
		ir = &ipRate{r: newRate(c.window)}
		c.ipRates[ip] = ir
	}
	ir.last = now
	if d := c.record(ir.r, bound, 1, now); d > 0 {
		// Not served: taken back from every rate it was counted in.
		ir.r.record(-1, now)
		if brokerRate != nil {
			brokerRate.record(-1, now)
		}
		if lr != nil {
			lr.record(-1, now)
		}
		return wait, d
	}
	return wait, 0
}

// record adds v to r and returns the throttle over bound, at most one
// window.
func (c *Connections) record(r *rate, bound, v float64, now time.Time) time.Duration {
	r.record(v, now)
	total, span := r.measure(now)
	return throttle(total, span, bound, c.window.Size)
}

// sweep drops the rates of addresses idle for a whole window, at most
// once a window.
func (c *Connections) sweep(now time.Time) {
	horizon := time.Duration(c.window.Num) * c.window.Size
	if now.Sub(c.lastSweep) < horizon {
		return
	}
	c.lastSweep = now
	maps.DeleteFunc(c.ipRates, func(_ netip.Addr, ir *ipRate) bool { return now.Sub(ir.last) >= horizon })
}

// ipTable is the ip entities' connection_creation_rate, by address,
// and the <default> one.
type ipTable struct {
	byAddr     map[netip.Addr]float64
	def        float64
	hasDefault bool
}

// ipTableOf builds the table of configs' ip entities; nil when none
// sets a rate.
func ipTableOf(configs Configs) *ipTable {
	t := &ipTable{byAddr: map[netip.Addr]float64{}}
	for e, cfg := range configs {
		v, ok := cfg[KeyConnectionCreationRate]
		if !e.IP.Present || !ok {
			continue
		}
		if e.IP.Default {
			t.def, t.hasDefault = v, true
			continue
		}
		if a, err := netip.ParseAddr(e.IP.Name); err == nil {
			t.byAddr[a.Unmap()] = v
		}
	}
	if len(t.byAddr) == 0 && !t.hasDefault {
		return nil
	}
	return t
}

// lookup is the rate for ip: its own, else the <default> one.
func (t *ipTable) lookup(ip netip.Addr) (float64, bool) {
	if t == nil {
		return 0, false
	}
	if v, ok := t.byAddr[ip]; ok {
		return v, true
	}
	return t.def, t.hasDefault
}
