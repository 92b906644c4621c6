package netloop

import "testing"

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
