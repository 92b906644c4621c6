package netloop

import (
	"errors"
	"net"
	"testing"
)

func TestSmokeRoundTrip(t *testing.T) {
	s, _ := startServer(t, Config{}, answerHandler{})
	c := dial(t, s.Addrs()[0])
	for i := int32(1); i <= 3; i++ {
		c.roundTrip(i)
	}
	if st := s.Stats(); st.Requests != 3 || st.ConnectionsOpen != 1 {
		t.Fatalf("stats %+v", st)
	}
	if st := stopped(t, s); st.Responses != 3 || st.ConnectionsOpen != 0 || st.BytesWritten == 0 {
		t.Fatalf("after shutdown: stats %+v", st)
	}
}

// Several listeners, port 0 resolved for each; all serve.
func TestSeveralListeners(t *testing.T) {
	s, _ := startServer(t, Config{Listeners: []string{"127.0.0.1:0", "127.0.0.2:0"}}, answerHandler{})
	addrs := s.Addrs()
	if len(addrs) != 2 {
		t.Fatalf("addrs %v", addrs)
	}
	for i, a := range addrs {
		ta := a.(*net.TCPAddr)
		if ta.Port == 0 || ta.IP.String() != []string{"127.0.0.1", "127.0.0.2"}[i] {
			t.Fatalf("addr %d is %v", i, a)
		}
		dial(t, a).roundTrip(int32(i))
	}
}

// A listener that cannot bind makes Start fail; a bad config fails New.
func TestStartAndConfigErrors(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	s, _ := newServer(t, Config{Listeners: []string{taken.Addr().String()}}, answerHandler{})
	if err := s.Start(); err == nil {
		t.Fatal("Start on a taken port succeeded")
	}
	for _, cfg := range []Config{
		{Listeners: []string{"no-port"}},
		{Listeners: []string{"127.0.0.1:0", "127.0.0.1:0"}},
		{MaxRequestBytes: -1},
		{MaxInFlightPerConn: -1},
		{MaxConnections: -1},
	} {
		if _, err := New(cfg, answerHandler{}); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v): %v, want ErrConfig", cfg, err)
		}
	}
	if _, err := New(Config{}, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("nil handler: %v", err)
	}
}
