package wire

// AuthState is what the broker's authenticator keeps about the
// connection (its SASL exchange), nil until it sets one; wire does not
// look inside. A nil Session has none.
func (s *Session) AuthState() any {
	if s == nil {
		return nil
	}
	return s.auth.Load()
}

// SetAuthState records the authenticator's state for the connection. It
// must always be given values of one type, never nil.
func (s *Session) SetAuthState(v any) { s.auth.Store(v) }
