package segment

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/segment/vfs"
)

// BenchmarkRead sends 1 MiB fetches of a 64 MiB log to a loopback TCP
// socket, side by side with the same bytes read from the same file with
// plain pread into a buffer and written to the socket. Both alternate per
// fetch; the metrics are log-MB/s (regions sent with sendfile(2)),
// raw-MB/s (pread+write) and log/raw. A second case sends the copying
// read (ReadAppend into a reused buffer) instead of the regions.
//
//	go test -run '^$' -bench 'Read' ./segment/
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	d, err := OpenDir(dir, Options{Logger: quietLogger})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	l, _, err := d.Open("bench", 0, Config{FlushPolicy: FlushNever})
	if err != nil {
		b.Fatal(err)
	}
	batch := makeBatch(1, 16<<10-70, 1, 1)
	for l.Size() < 64<<20 {
		if _, err := l.Append(batch, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	raw, err := vfs.OS.Open(l.Segments()[0].Path)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	conn := loopbackSink(b)
	defer conn.Close()
	rc, err := conn.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	const fetch = 1 << 20
	buf := make([]byte, fetch)
	var copyBuf []byte
	for _, mode := range []string{"regions-sendfile", "ReadAppend-copy"} {
		b.Run(mode, func(b *testing.B) {
			var logTime, rawTime time.Duration
			var logBytes, rawBytes int64
			offset, rawPos := int64(0), int64(0)
			b.ResetTimer()
			logRead := func() {
				req := ReadRequest{Offset: offset, MaxBytes: fetch, MaxOffset: -1, MinOneBatch: true}
				if mode == "regions-sendfile" {
					res, err := l.Read(req)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res.Regions {
						fd, ok := r.File.SysFd()
						if !ok {
							b.Fatal("no descriptor on an OS file")
						}
						if err := sendfile(rc, fd, r.Position, r.Length); err != nil {
							b.Fatal(err)
						}
					}
					logBytes += res.Bytes
					offset = res.NextOffset
					res.Release()
					return
				}
				data, next, err := l.ReadAppend(copyBuf[:0], req)
				copyBuf = data
				if err != nil {
					b.Fatal(err)
				}
				if _, err := conn.Write(data); err != nil {
					b.Fatal(err)
				}
				logBytes += int64(len(data))
				offset = next
			}
			rawRead := func() {
				n, err := raw.ReadAt(buf, rawPos)
				if err != nil && err != io.EOF {
					b.Fatal(err)
				}
				if _, err := conn.Write(buf[:n]); err != nil {
					b.Fatal(err)
				}
				rawPos += int64(n)
				rawBytes += int64(n)
			}
			for i := range b.N {
				if offset >= l.LogEndOffset() {
					offset, rawPos = 0, 0
				}
				if i%2 == 0 { // alternate who goes first
					logTime += timed(logRead)
					rawTime += timed(rawRead)
				} else {
					rawTime += timed(rawRead)
					logTime += timed(logRead)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(logBytes)/1e6/logTime.Seconds(), "log-MB/s")
			b.ReportMetric(float64(rawBytes)/1e6/rawTime.Seconds(), "raw-MB/s")
			b.ReportMetric((float64(logBytes)/logTime.Seconds())/(float64(rawBytes)/rawTime.Seconds()), "log/raw")
		})
	}
}

// loopbackSink connects to a loopback listener whose peer discards
// everything it receives.
func loopbackSink(b *testing.B) *net.TCPConn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		ln.Close()
		if err != nil {
			return
		}
		// The sink runs until the benchmark closes its end; that close
		// is the expected way out, so the copy's error says nothing.
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	return c.(*net.TCPConn)
}

// sendfile sends length bytes of fd from pos to the socket behind rc.
func sendfile(rc syscall.RawConn, fd int, pos, length int64) error {
	for length > 0 {
		var serr error
		err := rc.Write(func(s uintptr) bool {
			off := pos
			n, err := syscall.Sendfile(int(s), fd, &off, int(min(length, 1<<30)))
			if n > 0 {
				pos += int64(n)
				length -= int64(n)
			}
			if err == syscall.EAGAIN {
				return false
			}
			serr = err
			return true
		})
		if err != nil {
			return err
		}
		if serr != nil {
			return serr
		}
	}
	return nil
}
