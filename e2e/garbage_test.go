package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// withSize prefixes body with a size, which may lie.
func withSize(size int32, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(size)), body...)
}

// requestHeader builds a request header v1 (v2 when flexible adds the empty
// tag section).
func requestHeader(key, version int16, corr int32, flexible bool) []byte {
	h := binary.BigEndian.AppendUint16(nil, uint16(key))
	h = binary.BigEndian.AppendUint16(h, uint16(version))
	h = binary.BigEndian.AppendUint32(h, uint32(corr))
	h = binary.BigEndian.AppendUint16(h, 7)
	h = append(h, "garbage"...)
	if flexible {
		h = append(h, 0)
	}
	return h
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return c
}

// expectClosed checks that the broker closes conn without answering, as
// Kafka does for input it cannot parse.
func expectClosed(t *testing.T, conn net.Conn, what string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 256)
	n, err := conn.Read(buf)
	var ne net.Error
	switch {
	case n > 0:
		t.Errorf("%s: the broker answered %d bytes (% x...); it should close the connection", what, n, buf[:min(n, 16)])
	case errors.As(err, &ne) && ne.Timeout():
		t.Errorf("%s: the connection is still open 10s later; the broker should close it", what)
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
	default:
		t.Errorf("%s: read: %v", what, err)
	}
}

// readResponse reads one response frame and returns it after the size.
func readResponse(t *testing.T, conn net.Conn) []byte {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		t.Fatalf("reading a response size: %v", err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 1<<20 {
		t.Fatalf("response size %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(conn, body); err != nil {
		t.Fatalf("reading a %d-byte response: %v", n, err)
	}
	return body
}

func TestGarbageInput(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	addr := b.Addr()

	// A well-behaved client asks for metadata all along (raw requests:
	// kadm's ListTopics would mostly answer from its cache).
	cl := newClient(t, addr)
	adm := kadm.NewClient(cl)
	topic := topicName(t, "calm")
	mustCreate(t, adm, topic, 2, nil)
	metaReq := kmsg.NewPtrMetadataRequest()
	reqTopic := kmsg.NewMetadataRequestTopic()
	reqTopic.Topic = kmsg.StringPtr(topic)
	metaReq.Topics = append(metaReq.Topics, reqTopic)
	var served, failed atomic.Int64
	var lastErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Generous: the machine may be busy; a hang still shows.
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			resp, err := metaReq.RequestWith(ctx, cl)
			cancel()
			switch {
			case err != nil:
				failed.Add(1)
				lastErr.Store(err)
			case len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 2:
				failed.Add(1)
				lastErr.Store(fmt.Errorf("unexpected metadata %+v", resp.Topics))
			default:
				served.Add(1)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	before, err := b.Usage()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("RandomBytes", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 20; i++ {
			c := dial(t, addr)
			junk := make([]byte, 1+rng.IntN(8192))
			for j := range junk {
				junk[j] = byte(rng.Uint32())
			}
			_, _ = c.Write(junk)
			c.Close()
		}
	})

	t.Run("TruncatedFrame", func(t *testing.T) {
		c := dial(t, addr)
		defer c.Close()
		full := withSize(100, requestHeader(3, 12, 1, true))
		_, _ = c.Write(full)
		_ = c.(*net.TCPConn).CloseWrite() // the rest never comes
		expectClosed(t, c, "a frame cut short by EOF")
	})

	t.Run("GarbageBody", func(t *testing.T) {
		c := dial(t, addr)
		defer c.Close()
		body := append(requestHeader(3, 12, 2, true), 0xff, 0xff, 0xff, 0xff, 0x0f, 0xde, 0xad)
		_, _ = c.Write(withSize(int32(len(body)), body))
		expectClosed(t, c, "Metadata v12 with a garbage body")
	})

	t.Run("HugeLength", func(t *testing.T) {
		c := dial(t, addr)
		defer c.Close()
		_, _ = c.Write(withSize(0x7fffffff, requestHeader(3, 12, 3, true)))
		expectClosed(t, c, "a 2 GiB length prefix")
	})

	t.Run("NegativeLength", func(t *testing.T) {
		c := dial(t, addr)
		defer c.Close()
		_, _ = c.Write(withSize(-5, requestHeader(3, 12, 4, true)))
		expectClosed(t, c, "a negative length prefix")
	})

	t.Run("ZeroLength", func(t *testing.T) {
		c := dial(t, addr)
		defer c.Close()
		_, _ = c.Write(withSize(0, nil))
		expectClosed(t, c, "a zero length prefix")
	})

	t.Run("UnknownAPIKey", func(t *testing.T) {
		c := dial(t, addr)
		defer c.Close()
		body := requestHeader(999, 0, 5, false)
		_, _ = c.Write(withSize(int32(len(body)), body))
		expectClosed(t, c, "API key 999")
	})

	t.Run("UnsupportedMetadataVersion", func(t *testing.T) {
		c := dial(t, addr)
		defer c.Close()
		body := requestHeader(3, 99, 6, true)
		_, _ = c.Write(withSize(int32(len(body)), body))
		expectClosed(t, c, "Metadata v99")
	})

	t.Run("ApiVersionsV99", func(t *testing.T) {
		c := dial(t, addr)
		defer c.Close()
		// KIP-511: an ApiVersions version the broker does not know gets a
		// v0 answer with UNSUPPORTED_VERSION and the broker's range.
		body := append(requestHeader(18, 99, 77, true), 0, 0, 0)
		_, _ = c.Write(withSize(int32(len(body)), body))
		resp := readResponse(t, c)
		if corr := int32(binary.BigEndian.Uint32(resp)); corr != 77 {
			t.Fatalf("correlation id %d, want 77", corr)
		}
		v0 := kmsg.NewApiVersionsResponse()
		v0.Version = 0
		if err := v0.ReadFrom(resp[4:]); err != nil {
			t.Fatalf("not an ApiVersions v0 body: %v (% x)", err, resp)
		}
		if v0.ErrorCode != kerr.UnsupportedVersion.Code {
			t.Errorf("error code %d, want UNSUPPORTED_VERSION (35)", v0.ErrorCode)
		}
		var max int16 = -1
		for _, k := range v0.ApiKeys {
			if k.ApiKey == 18 {
				max = k.MaxVersion
			}
		}
		if max < 3 {
			t.Errorf("the v0 answer advertises ApiVersions up to v%d; want the broker's max (>= 3)", max)
		}
		// The client retries on the same connection with a version it got.
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = max
		req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-e2e", "1.0"
		_, _ = c.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("e2e")).AppendRequest(nil, req, 78))
		resp = readResponse(t, c)
		if corr := int32(binary.BigEndian.Uint32(resp)); corr != 78 {
			t.Fatalf("retry: correlation id %d, want 78", corr)
		}
		full := kmsg.NewApiVersionsResponse()
		full.Version = max
		if err := full.ReadFrom(resp[4:]); err != nil || full.ErrorCode != 0 || len(full.ApiKeys) < 5 {
			t.Errorf("retry at v%d: err %v, code %d, %d keys", max, err, full.ErrorCode, len(full.ApiKeys))
		}
	})

	// Many connections: a mix of the above plus connections held open with
	// half a frame, in two rounds, so a leak shows as growth in both.
	var rounds []int64
	for round := 0; round < 2; round++ {
		t.Run("ManyConnections", func(t *testing.T) { manyGarbageConnections(t, addr, uint64(round)) })
		time.Sleep(200 * time.Millisecond)
		u, err := b.Usage()
		if err != nil {
			t.Fatalf("broker gone after round %d: %v; %s", round, err, b.ExitState())
		}
		rounds = append(rounds, u.RSSBytes)
	}

	// Let the broker settle, then measure.
	time.Sleep(200 * time.Millisecond)
	after, err := b.Usage()
	if err != nil {
		t.Fatalf("broker gone after the garbage: %v; %s", err, b.ExitState())
	}
	close(stop)
	wg.Wait()

	growth := after.RSSBytes - before.RSSBytes
	t.Logf("broker RSS before %.1f MiB, after round 1 %.1f MiB, after round 2 %.1f MiB (growth %+.1f MiB), peak %.1f MiB; CPU %.2fs; good client served %d, failed %d",
		mib(before.RSSBytes), mib(rounds[0]), mib(rounds[1]), mib(growth), mib(after.PeakRSS),
		after.CPUSeconds-before.CPUSeconds, served.Load(), failed.Load())
	if strings.Contains(os.Getenv(testkit.BuildFlagsEnv), "-race") {
		t.Log("broker built with -race: its memory is the race detector's; the 64 MiB bound is not checked")
	} else if growth > 64<<20 {
		t.Errorf("RSS grew by %.1f MiB over the garbage connections; bound is 64 MiB", mib(growth))
	}
	if !b.Running() {
		t.Fatalf("the broker died: %s", b.ExitState())
	}
	if served.Load() == 0 || failed.Load() > 0 {
		t.Errorf("the well-behaved client was served %d times and failed %d times (last: %v)",
			served.Load(), failed.Load(), lastErr.Load())
	}
	// And a fresh client still works.
	if _, err := newAdmin(t, addr).ListTopics(testContext(t)); err != nil {
		t.Errorf("a new client after the garbage: %v", err)
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// manyGarbageConnections opens 1500 connections, each sending one kind of
// bad input, and holds up to 200 of them open with half a frame.
func manyGarbageConnections(t *testing.T, addr string, seed uint64) {
	rng := rand.New(rand.NewPCG(3, seed))
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	big := make([]byte, 256<<10)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	for i := 0; i < 1500; i++ {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		switch i % 6 {
		case 0: // a length over the limit, then bytes it must not buffer
			_, _ = c.Write(withSize(200<<20, big))
		case 1:
			_, _ = c.Write(withSize(-1, big[:64]))
		case 2:
			_, _ = c.Write(big[:rng.IntN(4096)+1])
		case 3:
			body := append(requestHeader(int16(rng.IntN(100)), int16(rng.IntN(20)), int32(i), true), big[:rng.IntN(512)]...)
			_, _ = c.Write(withSize(int32(len(body)), body))
		case 4: // a legal 1 MiB frame, cut off after 64 KiB
			_, _ = c.Write(withSize(1<<20, big[:64<<10]))
		case 5: // half a frame, held open
			if len(held) < 200 {
				_, _ = c.Write(withSize(1000, requestHeader(3, 12, int32(i), true)))
				held = append(held, c)
				continue
			}
		}
		c.Close()
	}
}
