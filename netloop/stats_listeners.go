package netloop

// ConnectionsByListener counts the open connections by the name of the
// listener that accepted them (Config.ListenerNames; "" where unnamed).
// It walks the connections under the server's lock, so it is for a
// metrics scrape, not for a hot path; the connections themselves count
// nothing more.
func (s *Server) ConnectionsByListener() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int)
	for c := range s.conns {
		out[c.session.Listener]++
	}
	for c := range s.tlsConns {
		out[c.session.Listener]++
	}
	return out
}
