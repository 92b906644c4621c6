package netloop

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceFrame is a produce request whose single partition carries
// records: opaque bytes (netloop does not look inside), so a test can
// compare what the handler received with what was sent.
func produceFrame(corr int32, records []byte) []byte {
	r := kmsg.NewPtrProduceRequest()
	r.Version = 7
	r.Acks = 1
	r.TimeoutMillis = 1000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "t"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = records
	tp.Partitions = append(tp.Partitions, p)
	r.Topics = append(r.Topics, tp)
	return requestFrame(r, corr, "test-client")
}

// A large frame that arrives in pieces is read into its own buffer as it
// comes: gnet's inbound buffer holds nothing between reads, and the
// request the handler gets carries every byte that was sent.
func TestLargeFrameAssembledAsItArrives(t *testing.T) {
	reads := make(chan int, 1024)
	h := newHoldHandler()
	s, _ := newServer(t, Config{}, h)
	s.hooks.afterTraffic = func(buffered int) { reads <- buffered }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)

	records := bytes.Repeat([]byte("0123456789abcdef"), (assembleMin*4)/16)
	for i := range records {
		records[i] ^= byte(i * 7) // not periodic, so a misplaced piece shows
	}
	frame := produceFrame(9, records)
	c := dial(t, s.Addrs()[0])
	const piece = 8 << 10
	for off := 0; off < len(frame); off += piece {
		c.send(frame[off:min(off+piece, len(frame))])
		buffered := waitSignal(t, reads, "a read")
		if off == 0 {
			continue // the size prefix and first bytes; assembly starts here
		}
		if buffered != 0 {
			t.Fatalf("after %d bytes gnet holds %d bytes of an assembling frame, want 0", off+piece, buffered)
		}
	}
	req := h.next(t)
	if req.Header.CorrelationID != 9 {
		t.Fatalf("correlation id %d, want 9", req.Header.CorrelationID)
	}
	got := req.Body.(*kmsg.ProduceRequest).Topics[0].Partitions[0].Records
	if !bytes.Equal(got, records) {
		t.Fatalf("records differ: got %d bytes, sent %d", len(got), len(records))
	}
	req.Reply(corrOnly(req.Header.CorrelationID))
	if corr, _ := c.recv(); corr != 9 {
		t.Fatalf("response correlation id %d, want 9", corr)
	}
	// A small frame right after is served as usual.
	c.send(apiVersionsFrame(10))
	small := h.next(t)
	if small.Header.CorrelationID != 10 {
		t.Fatalf("next request has correlation id %d, want 10", small.Header.CorrelationID)
	}
	small.Reply(corrOnly(10))
}

// A client that goes away in the middle of a large frame gives back the
// in-flight slot the frame took: shutdown finds nothing pending.
func TestLargeFrameAbandonedMidway(t *testing.T) {
	reads := make(chan int, 1024)
	s, _ := newServer(t, Config{}, answerHandler{})
	s.hooks.afterTraffic = func(buffered int) { reads <- buffered }
	closed := make(chan struct{}, 1)
	s.hooks.afterClose = func() { closed <- struct{}{} }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	frame := produceFrame(1, make([]byte, assembleMin*2))
	c := dial(t, s.Addrs()[0])
	c.send(frame[:len(frame)/2])
	waitSignal(t, reads, "a read")
	_ = c.Close()
	waitSignal(t, closed, "the server to see the close")
	if p := s.pending.Load(); p != 0 {
		t.Fatalf("%d requests pending after the client left mid-frame, want 0", p)
	}
	if st := stopped(t, s); st.Requests != 0 {
		t.Fatalf("%d requests decoded from a frame that never completed", st.Requests)
	}
}
