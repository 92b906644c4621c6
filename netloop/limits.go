package netloop

import (
	"fmt"
	"maps"
)

// ConnectionLimits are the limits on open connections, which change while
// the server runs (SetConnectionLimits) as Kafka's dynamic
// max.connections, listener.name.<l>.max.connections,
// max.connections.per.ip and max.connections.per.ip.overrides do. 0 is
// unlimited everywhere but in PerIPOverrides, where it admits none.
type ConnectionLimits struct {
	// Max is max.connections over all listeners but the protected one.
	Max int
	// Listeners are listener.name.<l>.max.connections, by listener name
	// as in Config.ListenerNames: each caps its listener's own
	// connections, the protected listener's too.
	Listeners map[string]int
	// PerIP is max.connections.per.ip.
	PerIP int
	// PerIPOverrides are max.connections.per.ip.overrides, by address as
	// its unmapped netip.Addr prints.
	PerIPOverrides map[string]int
}

// limitsOf are the limits cfg starts with.
func limitsOf(cfg Config) ConnectionLimits {
	return ConnectionLimits{Max: cfg.MaxConnections, Listeners: maps.Clone(cfg.ListenerMaxConnections),
		PerIP: cfg.MaxConnectionsPerIP, PerIPOverrides: maps.Clone(cfg.MaxConnectionsPerIPOverrides)}
}

// SetConnectionLimits replaces the limits on open connections. Open
// connections are kept, over a lowered limit too (as in Kafka, a new
// limit applies to new connections); listeners waiting for a slot look
// again, so a raised limit lets them accept at once.
func (s *Server) SetConnectionLimits(l ConnectionLimits) error {
	if l.Max < 0 || l.PerIP < 0 {
		return fmt.Errorf("%w: negative connection limit", ErrConfig)
	}
	for _, m := range []map[string]int{l.Listeners, l.PerIPOverrides} {
		for k, v := range m {
			if v < 0 {
				return fmt.Errorf("%w: negative connection limit for %s", ErrConfig, k)
			}
		}
	}
	l.Listeners, l.PerIPOverrides = maps.Clone(l.Listeners), maps.Clone(l.PerIPOverrides)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = l
	s.slotFreedLocked()
	return nil
}

// ConnectionLimits are the limits in force.
func (s *Server) ConnectionLimits() ConnectionLimits {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limits
	l.Listeners, l.PerIPOverrides = maps.Clone(l.Listeners), maps.Clone(l.PerIPOverrides)
	return l
}

// slotRefusalLocked names the limit (max.connections, or the listener's
// own) that leaves no slot for a connection of listener now, and its
// value; "" when there is a slot. s.mu is held.
func (s *Server) slotRefusalLocked(listener string) (key string, limit int) {
	if n, ok := s.limits.Listeners[listener]; ok && n > 0 && s.openOn[listener] >= n {
		return "listener.name." + listener + ".max.connections", n
	}
	if s.limits.Max > 0 && s.open >= s.limits.Max && (listener == "" || listener != s.cfg.ProtectedListener) {
		return "max.connections", s.limits.Max
	}
	return "", 0
}

// ipRefusalLocked says why ip may open no more connections; "" when it
// may. s.mu is held.
func (s *Server) ipRefusalLocked(ip string) string {
	if limit, ok := s.limits.PerIPOverrides[ip]; ok {
		if s.perIP[ip] >= limit {
			return fmt.Sprintf("max.connections.per.ip.overrides (%d) reached for %s", limit, ip)
		}
	} else if s.limits.PerIP > 0 && s.perIP[ip] >= s.limits.PerIP {
		return fmt.Sprintf("max.connections.per.ip (%d) reached for %s", s.limits.PerIP, ip)
	}
	return ""
}
