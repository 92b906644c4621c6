package netloop

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire"
)

// BenchmarkRoundTrip measures request/response round trips with a trivial
// handler (an 8-byte answer given at once), each connection doing one
// request at a time, and reports requests per second over all
// connections. "netloop" is this package; "stdlib" is a goroutine-per-
// connection net.Listener server doing the same framing, as a yardstick
// measured side by side on the same machine.
//
//	go test -run '^$' -bench RoundTrip -benchtime 3s ./netloop/
//
// The depth=5 cases pipeline five requests per connection (write five,
// read five), as Kafka clients do with max.in.flight.requests.per.connection=5.
func BenchmarkRoundTrip(b *testing.B) {
	for _, tc := range []struct{ conns, depth int }{{1, 1}, {64, 1}, {1, 5}, {64, 5}} {
		name := fmt.Sprintf("conns=%d/depth=%d", tc.conns, tc.depth)
		b.Run("netloop/"+name, func(b *testing.B) {
			s, _ := startServer(b, Config{}, handlerFunc(func(req *wire.Request) {
				req.Reply(corrOnly(req.Header.CorrelationID))
			}))
			runRoundTrips(b, s.Addrs()[0], tc.conns, tc.depth)
		})
		b.Run("stdlib/"+name, func(b *testing.B) {
			runRoundTrips(b, stdlibServer(b), tc.conns, tc.depth)
		})
	}
}

func runRoundTrips(b *testing.B, addr net.Addr, conns, depth int) {
	clients := make([]net.Conn, conns)
	for i := range clients {
		clients[i] = dial(b, addr).Conn
	}
	var frames []byte
	for range depth {
		frames = append(frames, metadataFrame(7)...)
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	start := time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := make([]byte, 8*depth)
			for left.Add(-int64(depth)) > -int64(depth) {
				if _, err := c.Write(frames); err != nil {
					failed.Store(err)
					return
				}
				if _, err := io.ReadFull(c, resp); err != nil {
					failed.Store(err)
					return
				}
				for i := 0; i < len(resp); i += 8 {
					if binary.BigEndian.Uint32(resp[i+4:]) != 7 {
						failed.Store(error(errBadCorr))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

// stdlibServer answers size-prefixed frames with their correlation id,
// one goroutine per connection.
func stdlibServer(b *testing.B) net.Addr {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				var hdr [4]byte
				buf := make([]byte, 1024)
				out := make([]byte, 8)
				binary.BigEndian.PutUint32(out, 4)
				for {
					if _, err := io.ReadFull(r, hdr[:]); err != nil {
						return
					}
					n := binary.BigEndian.Uint32(hdr[:])
					if n < 8 || n > uint32(len(buf)) {
						return
					}
					if _, err := io.ReadFull(r, buf[:n]); err != nil {
						return
					}
					copy(out[4:], buf[4:8])
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr()
}
