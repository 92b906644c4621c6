package e2e

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataV12 is a Metadata v12 request (no topics) framed by hand, so
// its header can be varied; tags is the header's tagged-field section.
func metadataV12(corr int32, clientID []byte, tags []byte) []byte {
	body := binary.BigEndian.AppendUint16(nil, 3)
	body = binary.BigEndian.AppendUint16(body, 12)
	body = binary.BigEndian.AppendUint32(body, uint32(corr))
	if clientID == nil {
		body = binary.BigEndian.AppendUint16(body, 0xffff) // null client id
	} else {
		body = binary.BigEndian.AppendUint16(body, uint16(len(clientID)))
		body = append(body, clientID...)
	}
	body = append(body, tags...)
	// Body: topics = empty compact array (1), allow auto create false,
	// include topic authorized operations false, no tags.
	body = append(body, 1, 0, 0, 0)
	return withSize(int32(len(body)), body)
}

// expectMetadataAnswer reads one Metadata v12 answer and checks it.
func expectMetadataAnswer(t *testing.T, what string, c net.Conn, corr int32) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("%s: no answer: %v", what, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		t.Fatalf("%s: correlation id %d, want %d", what, got, corr)
	}
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	if err := resp.ReadFrom(body[5:]); err != nil || len(resp.Brokers) != 1 {
		t.Errorf("%s: answer %+v, %v", what, resp, err)
	}
}

func TestFraming(t *testing.T) {
	b := sharedBroker(t)

	t.Run("NullClientID", func(t *testing.T) {
		conn := dial(t, b.Addr())
		defer conn.Close()
		_, _ = conn.Write(metadataV12(1, nil, []byte{0}))
		expectMetadataAnswer(t, "a null client id (Kafka reads it as empty)", conn, 1)
	})

	t.Run("UnknownHeaderTag", func(t *testing.T) {
		// Header v2 tagged fields: 1 field, tag 7, 3 bytes. Unknown tags
		// are skipped, as Kafka does.
		conn := dial(t, b.Addr())
		defer conn.Close()
		_, _ = conn.Write(metadataV12(2, []byte("tags"), []byte{1, 7, 3, 'a', 'b', 'c'}))
		expectMetadataAnswer(t, "an unknown tagged field in the request header", conn, 2)
	})

	t.Run("OneByteAtATime", func(t *testing.T) {
		conn := dial(t, b.Addr())
		defer conn.Close()
		frame := metadataV12(3, []byte("slow"), []byte{0})
		for i := range frame {
			if _, err := conn.Write(frame[i : i+1]); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		expectMetadataAnswer(t, "a request written one byte at a time", conn, 3)
	})

	t.Run("ManyInOneWrite", func(t *testing.T) {
		conn := dial(t, b.Addr())
		defer conn.Close()
		var all []byte
		for corr := int32(10); corr < 60; corr++ {
			all = append(all, metadataV12(corr, []byte("batch"), []byte{0})...)
		}
		// And the next one split over the end of the write.
		next := metadataV12(60, []byte("batch"), []byte{0})
		all = append(all, next[:7]...)
		_, _ = conn.Write(all)
		time.Sleep(20 * time.Millisecond)
		_, _ = conn.Write(next[7:])
		for corr := int32(10); corr <= 60; corr++ {
			expectMetadataAnswer(t, "50 requests in one write", conn, corr)
		}
	})
}
