package netloop

import (
	"errors"
	"testing"

	"github.com/samsa-io/samsa/wire"
)

func TestRequestsCarryTheirConnectionsSession(t *testing.T) {
	h := newHoldHandler()
	cfg := Config{Listeners: []string{"127.0.0.1:0", "127.0.0.2:0"}, ListenerNames: []string{"PLAINTEXT", "SASL_PLAINTEXT"}}
	s, _ := startServer(t, cfg, h)
	addrs := s.Addrs()

	a := dial(t, addrs[0])
	a.send(apiVersionsFrame(1))
	first := h.next(t)
	b := dial(t, addrs[1])
	b.send(apiVersionsFrame(2))
	second := h.next(t)
	if first.Session == nil || first.Session.Listener != "PLAINTEXT" || second.Session.Listener != "SASL_PLAINTEXT" {
		t.Fatalf("listeners %+v and %+v, want PLAINTEXT and SASL_PLAINTEXT", first.Session, second.Session)
	}
	if p := first.Session.Principal(); p != wire.AnonymousPrincipal {
		t.Fatalf("a new connection's principal is %q", p)
	}
	second.Session.SetPrincipal("User:alice")
	first.Reply(answer(first))
	second.Reply(answer(second))

	b.send(apiVersionsFrame(3))
	again := h.next(t)
	if again.Session != second.Session || again.Session.Principal() != "User:alice" {
		t.Fatalf("the connection's next request has principal %q", again.Session.Principal())
	}
	if first.Session.Principal() != wire.AnonymousPrincipal {
		t.Fatal("another connection's principal changed")
	}
	again.Reply(answer(again))
}

func TestListenerNamesMustMatchListeners(t *testing.T) {
	_, err := New(Config{Listeners: []string{"127.0.0.1:0"}, ListenerNames: []string{"A", "B"}}, answerHandler{})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("got %v, want ErrConfig", err)
	}
}
