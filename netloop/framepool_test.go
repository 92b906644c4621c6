package netloop

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// A buffer given back is handed out again for a frame it holds (never
// for one it does not), and the pool keeps no more idle bytes than its
// budget.
func TestFramePoolReuseAndBudget(t *testing.T) {
	p := newFramePool()
	b := p.get(100 << 10)
	if len(b) != 100<<10 || cap(b) != 128<<10 {
		t.Fatalf("len %d cap %d, want 100 KiB in a 128 KiB buffer", len(b), cap(b))
	}
	p.put(b)
	if big := p.get(200 << 10); cap(big) < 200<<10 || &big[:1][0] == &b[:1][0] {
		t.Fatal("a frame was handed a buffer too small for it")
	}
	again := p.get(90 << 10)
	if &again[:1][0] != &b[:1][0] || p.reused.Load() != 1 {
		t.Fatal("a buffer given back was not reused for the next frame it holds")
	}
	p.put(make([]byte, 10)) // not one of the pool's: ignored
	p.put(make([]byte, 0, 100<<10))
	if p.idle != 0 {
		t.Fatalf("idle %d after foreign buffers were put", p.idle)
	}
	for range 3 * framePoolBudget / (1 << 20) {
		p.put(make([]byte, 0, 1<<20))
	}
	if p.idle > framePoolBudget {
		t.Fatalf("pool keeps %d idle bytes, budget %d", p.idle, framePoolBudget)
	}
	// Over the budget the smallest idle buffers go first: a new, larger
	// size is kept.
	big := make([]byte, 0, 3<<20)
	p.put(big)
	if got := p.get(3 << 20); &got[:1][0] != &big[:1][0] {
		t.Fatal("a buffer given back over the budget was dropped instead of a smaller idle one")
	}
}

// A handler that releases a large frame's request gets the next large
// frame in that buffer, whole and correct.
func TestReleasedFrameIsReused(t *testing.T) {
	h := newHoldHandler()
	s, _ := startServer(t, Config{}, h)
	c := dial(t, s.Addrs()[0])
	for round := int32(1); round <= 3; round++ {
		records := bytes.Repeat([]byte{byte(round)}, 200<<10)
		c.send(produceFrame(round, records))
		req := h.next(t)
		got := req.Body.(*kmsg.ProduceRequest).Topics[0].Partitions[0].Records
		if !bytes.Equal(got, records) {
			t.Fatalf("round %d: records differ from those sent", round)
		}
		req.Reply(corrOnly(req.Header.CorrelationID))
		req.ReleaseFrame()
		if req.Frame != nil {
			t.Fatal("Frame still set after ReleaseFrame")
		}
		if corr, _ := c.recv(); corr != round {
			t.Fatalf("response %d, want %d", corr, round)
		}
	}
	// At least the two later frames' whole buffers (the first buffers of
	// frames that grew as they arrived are reused too).
	if st := s.Stats(); st.FrameBuffersReused < 2 {
		t.Fatalf("%d frame buffers reused over 3 released frames, want at least 2", st.FrameBuffersReused)
	}
}

// Frames of every size class and small ones, interleaved and written in
// random pieces, each reach the handler whole; the handler releases them
// as it goes, so later frames land in reused buffers, and no frame's
// bytes show through another's.
func TestMixedFramesRandomPieces(t *testing.T) {
	type got struct {
		corr    int32
		records []byte
	}
	gots := make(chan got, 64)
	h := handlerFunc(func(req *wire.Request) {
		var recs []byte
		if p, ok := req.Body.(*kmsg.ProduceRequest); ok {
			recs = append([]byte(nil), p.Topics[0].Partitions[0].Records...)
		}
		gots <- got{req.Header.CorrelationID, recs}
		req.Reply(corrOnly(req.Header.CorrelationID))
		req.ReleaseFrame()
	})
	s, _ := startServer(t, Config{}, h)
	c := dial(t, s.Addrs()[0])
	rng := rand.New(rand.NewPCG(7, 7))
	sizes := []int{10, 1000, 60 << 10, 64 << 10, 100 << 10, 700 << 10, 2 << 20, 5 << 20}
	var stream bytes.Buffer
	want := map[int32][]byte{}
	const frames = 40
	for corr := int32(0); corr < frames; corr++ {
		recs := make([]byte, sizes[rng.IntN(len(sizes))])
		for i := range recs {
			recs[i] = byte(rng.Uint32())
		}
		want[corr] = recs
		stream.Write(produceFrame(corr, recs))
	}
	go func() {
		b := stream.Bytes()
		for len(b) > 0 {
			n := min(len(b), 1+rng.IntN(300<<10))
			if _, err := c.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
		}
	}()
	for i := int32(0); i < frames; i++ {
		g := waitSignal(t, gots, "a request")
		if g.corr != i {
			t.Fatalf("request %d arrived as number %d", g.corr, i)
		}
		if !bytes.Equal(g.records, want[i]) {
			t.Fatalf("request %d: records differ from those sent (%d bytes)", i, len(want[i]))
		}
		if corr, _ := c.recv(); corr != i {
			t.Fatalf("response %d, want %d", corr, i)
		}
	}
	if st := s.Stats(); st.FrameBuffersReused == 0 {
		t.Fatal("no frame buffer was reused over 40 released frames")
	}
}

func TestRoundFrame(t *testing.T) {
	for _, c := range []struct{ size, want int }{
		{64 << 10, 128 << 10}, {1 << 20, 1280 << 10},
		{1100 << 10, 1408 << 10}, {3 << 20, 3840 << 10}, {16 << 20, 20 << 20},
	} {
		got := roundFrame(c.size)
		if got != c.want {
			t.Errorf("roundFrame(%d) = %d, want %d", c.size, got, c.want)
		}
		if got < c.size+c.size/4 || float64(got) > float64(c.size)*1.375+float64(frameRound) {
			t.Errorf("roundFrame(%d) = %d: outside [size*1.25, size*1.375+64KiB]", c.size, got)
		}
	}
}
