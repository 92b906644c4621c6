package e2e

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A client may write many requests before it reads any answer (Kafka
// stops reading such a connection until it catches up; TCP pushes back on
// the client). The broker must answer every one, in order, and not cut
// the connection off.
func TestPipelinedFloodIsAnsweredInOrder(t *testing.T) {
	b := sharedBroker(t)
	conn, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	const requests = 20000
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	req.Topics = []kmsg.MetadataRequestTopic{}
	format := kmsg.NewRequestFormatter(kmsg.FormatterClientID("flood"))
	writeErr := make(chan error, 1)
	go func() {
		var buf, one []byte
		for i := int32(0); i < requests; i++ {
			// AppendRequest writes the size at dst[0]: one frame at a time.
			one = format.AppendRequest(one[:0], req, i)
			buf = append(buf, one...)
			if len(buf) > 64<<10 || i == requests-1 {
				if _, err := conn.Write(buf); err != nil {
					writeErr <- err
					return
				}
				buf = buf[:0]
			}
		}
		writeErr <- nil
	}()

	time.Sleep(500 * time.Millisecond) // let the requests pile up unread
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	var size [4]byte
	body := make([]byte, 1<<16)
	for want := int32(0); want < requests; want++ {
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			t.Fatalf("after %d of %d answers: %v (writer: %v)", want, requests, err, pending(writeErr))
		}
		n := int(binary.BigEndian.Uint32(size[:]))
		if n > len(body) {
			t.Fatalf("answer %d is %d bytes", want, n)
		}
		if _, err := io.ReadFull(conn, body[:n]); err != nil {
			t.Fatalf("answer %d: %v", want, err)
		}
		if corr := int32(binary.BigEndian.Uint32(body)); corr != want {
			t.Fatalf("answer %d carries correlation id %d: out of order", want, corr)
		}
	}
	if err := <-writeErr; err != nil {
		t.Errorf("writing the requests: %v", err)
	}
}

func pending(ch chan error) any {
	select {
	case err := <-ch:
		return err
	default:
		return "still writing"
	}
}
