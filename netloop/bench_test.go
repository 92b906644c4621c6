package netloop

import (
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

// BenchmarkRoundTrip measures request/response round trips through the
// server with a trivial handler (answers at once on the loop with an
// 8-byte response), each connection doing one request at a time. It
// reports requests per second over all connections.
//
//	go test -run '^$' -bench RoundTrip -benchtime 3s ./netloop/
func BenchmarkRoundTrip(b *testing.B) {
	for _, conns := range []int{1, 64} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			s, _ := startServer(b, Config{}, handlerFunc(func(req *wire.Request) {
				req.Reply(corrOnly(req.Header.CorrelationID))
			}))
			clients := make([]net.Conn, conns)
			for i := range clients {
				clients[i] = dial(b, s.Addrs()[0]).Conn
			}
			frame := metadataFrame(7)
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
					resp := make([]byte, 8)
					for left.Add(-1) >= 0 {
						if _, err := c.Write(frame); err != nil {
							failed.Store(err)
							return
						}
						if _, err := io.ReadFull(c, resp); err != nil {
							failed.Store(err)
							return
						}
						if binary.BigEndian.Uint32(resp[4:]) != 7 {
							failed.Store(errBadCorr)
							return
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
		})
	}
}
