package netloop

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// raiseFileLimit lifts RLIMIT_NOFILE to at least n (within the hard
// limit); each test connection costs three descriptors (client, gnet's,
// the writer's dup).
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Skipf("RLIMIT_NOFILE hard limit %d < %d", lim.Max, n)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
}

// A thousand connections open at once, each served.
func TestThousandConnections(t *testing.T) {
	const n = 1000
	raiseFileLimit(t, 3*n+256)
	s, _ := startServer(t, Config{}, answerHandler{})
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = dial(t, s.Addrs()[0])
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			corr := int32(i)
			if _, err := c.Write(append(apiVersionsFrame(corr), metadataFrame(corr+n)...)); err != nil {
				errs <- err
				return
			}
			for _, want := range []int32{corr, corr + n} {
				got, _, err := c.tryRecv()
				if err == nil && got != want {
					err = errBadCorr
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := s.Stats(); st.ConnectionsOpen != n || st.Requests != 2*n {
		t.Fatalf("stats %+v", st)
	}
	if st := stopped(t, s); st.Responses != 2*n || st.ConnectionsOpen != 0 {
		t.Fatalf("after shutdown: stats %+v", st)
	}
}

var errBadCorr = errorString("wrong correlation id")

type errorString string

func (e errorString) Error() string { return string(e) }

// Garbage of every kind, on many connections, while a well-behaved client
// keeps being served: random bytes, truncated frames, valid headers with
// garbage bodies, huge and negative length prefixes.
func TestGarbageWhileServingGoodClient(t *testing.T) {
	s, _ := startServer(t, Config{MaxRequestBytes: 1 << 20}, answerHandler{})
	addr := s.Addrs()[0]

	stop := make(chan struct{})
	goodDone := make(chan int)
	good := dial(t, addr)
	go func() {
		trips := 0
		defer func() { goodDone <- trips }()
		for corr := int32(0); ; corr++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := good.Write(metadataFrame(corr)); err != nil {
				return
			}
			got, _, err := good.tryRecv()
			if err != nil || got != corr {
				return
			}
			trips++
		}
	}()

	rng := rand.New(rand.NewPCG(7, 11))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	withSize := func(body []byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	md := metadataFrame(5)
	var inputs [][]byte
	for range 100 {
		inputs = append(inputs, randBytes(1+rng.IntN(300)))                      // random bytes
		inputs = append(inputs, withSize(randBytes(rng.IntN(300))))              // framed random bytes
		inputs = append(inputs, withSize(append(md[4:18:18], randBytes(40)...))) // valid header, garbage body
		inputs = append(inputs, md[:4+rng.IntN(len(md)-4)])                      // truncated frame
	}
	inputs = append(inputs,
		[]byte{0x7f, 0xff, 0xff, 0xff}, // huge length prefix
		[]byte{0xff, 0xff, 0xff, 0xfe}, // negative
		bytes.Repeat([]byte{0xff}, 64),
	)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for _, in := range inputs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c := dial(t, addr)
			_, _ = c.Write(in)
			// The server closes it, or it waits for the rest of a frame
			// that never comes and the client hangs up.
			_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			_, _ = c.Read(make([]byte, 1<<16))
			c.Close()
		}()
	}
	wg.Wait()
	close(stop)
	trips := waitSignal(t, goodDone, "the good client")
	if trips == 0 {
		t.Fatal("the good client was not served")
	}
	// After everything, the good client still works.
	good.roundTrip(1 << 20)
	st := s.Stats()
	if st.DecodeErrors+st.FramesRejected < 100 {
		t.Fatalf("only %d bad frames seen: %+v", st.DecodeErrors+st.FramesRejected, st)
	}
	t.Logf("good client: %d round trips during the garbage; %d decode errors, %d frames rejected",
		trips, st.DecodeErrors, st.FramesRejected)
	good.Close()
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if st := s.Stats(); st.ConnectionsOpen != 0 {
		t.Fatalf("%d connections left open", st.ConnectionsOpen)
	}
}

// A real Kafka client (franz-go) talks to the server: it negotiates with
// ApiVersions, then sends its request.
func TestFranzGoClient(t *testing.T) {
	s, _ := startServer(t, Config{}, answerHandler{})
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()[0].String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	resp, err := cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != 0 || len(av.ApiKeys) == 0 {
		t.Fatalf("ApiVersions: code %d, %d keys", av.ErrorCode, len(av.ApiKeys))
	}
	if st := s.Stats(); st.Requests < 2 {
		t.Fatalf("%d requests; want the client's own negotiation and ours", st.Requests)
	}
}
