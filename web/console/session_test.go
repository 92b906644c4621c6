package console

import (
	"fmt"
	"testing"
	"time"
)

// TestSessionsExpireAndStayBounded: a session ends after its lifetime or
// when signed out, and the store never holds more than maxSessions, the
// oldest going first.
func TestSessionsExpireAndStayBounded(t *testing.T) {
	s := newSessions()
	now := time.Unix(1_000_000, 0)
	id := s.add(credentials{User: "alice"}, now)
	if who, ok := s.get(id, now.Add(sessionLifetime-time.Second)); !ok || who.User != "alice" {
		t.Fatalf("a fresh session: %v %v", who, ok)
	}
	if _, ok := s.get(id, now.Add(sessionLifetime+time.Second)); ok {
		t.Error("a session outlived its lifetime")
	}
	id = s.add(credentials{User: "bob"}, now)
	s.remove(id)
	if _, ok := s.get(id, now); ok {
		t.Error("a signed-out session still opens pages")
	}
	first := s.add(credentials{User: "first"}, now)
	for i := range maxSessions {
		s.add(credentials{User: fmt.Sprint(i)}, now.Add(time.Duration(i+1)*time.Millisecond))
	}
	if len(s.byID) > maxSessions {
		t.Errorf("%d sessions held, want at most %d", len(s.byID), maxSessions)
	}
	if _, ok := s.get(first, now); ok {
		t.Error("the oldest session survived the store filling up")
	}
}
