package netloop

import (
	"net"
	"time"
)

// At max.connections, or at its own listener.name.<l>.max.connections,
// a listener stops accepting until a connection closes, as Kafka's
// acceptor waits for a connection slot: the connection just accepted is
// held (unread) by the accept goroutine and the next ones wait in the
// listen backlog, rather than being accepted and closed. The protected
// listener (the inter-broker one, when there are several) is spared
// max.connections, not its own limit, as in Kafka, so brokers still
// reach a broker full of clients. OnOpen's check (admitConn) stays as
// the backstop for listeners racing for the last slot. A limit changed
// live (SetConnectionLimits) wakes the waiting listeners too.

// waitForSlot returns once the broker has room for a connection of
// listener, false when the server stops first (tc is then closed).
func (s *Server) waitForSlot(tc *net.TCPConn, listener string) bool {
	counted := false
	for {
		s.mu.Lock()
		key, limit := s.slotRefusalLocked(listener)
		if key == "" {
			s.mu.Unlock()
			return true
		}
		if s.slotFreed == nil {
			s.slotFreed = make(chan struct{})
		}
		freed := s.slotFreed
		s.mu.Unlock()
		if !counted {
			counted = true
			s.stats.slotWaits.Add(1)
			s.logSlotWait(listener, key, limit)
		}
		select {
		case <-freed:
		case <-s.acceptStop:
			_ = tc.Close()
			return false
		}
	}
}

// slotFreedLocked wakes the listeners waiting for a slot; s.mu is held.
func (s *Server) slotFreedLocked() {
	if s.slotFreed != nil {
		close(s.slotFreed)
		s.slotFreed = nil
	}
}

// logSlotWait says, at most every acceptLogEvery, that a listener waits
// at a connection limit: its clients' connects hang in the backlog
// meanwhile.
func (s *Server) logSlotWait(listener, key string, limit int) {
	now := time.Now().UnixNano()
	last := s.slotLogAt.Load()
	if now-last < int64(acceptLogEvery) || !s.slotLogAt.CompareAndSwap(last, now) {
		return
	}
	s.log.Warn("netloop: "+key+" reached: the listener accepts no more connections until one closes",
		"listener", listener, "limit", limit, "open_connections", s.stats.connectionsOpen.Load())
}
