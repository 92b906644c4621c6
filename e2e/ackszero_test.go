package e2e

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// An acks=0 produce gets no response. When it fails (here: a topic that
// does not exist and is not auto-created by Produce), the broker closes
// the connection after answering the requests before it, as Kafka does, so
// the client learns something is wrong; the request after it is not
// answered.
func TestAcksZeroFailureClosesConnection(t *testing.T) {
	b := sharedBroker(t)
	conn, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	format := kmsg.NewRequestFormatter(kmsg.FormatterClientID("acks-zero"))
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	meta.Topics = []kmsg.MetadataRequestTopic{}
	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks, produce.TimeoutMillis = 9, 0, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "acks-zero-no-such-topic"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = []byte("records that never get looked at")
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)

	// AppendRequest writes the size at dst[0]: one frame per call.
	var frames []byte
	frames = append(frames, format.AppendRequest(nil, meta, 1)...)
	frames = append(frames, format.AppendRequest(nil, produce, 2)...)
	frames = append(frames, format.AppendRequest(nil, meta, 3)...)
	if _, err := conn.Write(frames); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		t.Fatalf("no answer to the request before the failed produce: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(conn, body); err != nil {
		t.Fatal(err)
	}
	if corr := binary.BigEndian.Uint32(body); corr != 1 {
		t.Fatalf("first answer carries correlation id %d, want 1", corr)
	}
	n, err := io.ReadFull(conn, size[:])
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		t.Fatal("the connection stayed open after a failed acks=0 produce")
	case err == nil:
		t.Fatalf("got another answer (%d bytes) after a failed acks=0 produce", binary.BigEndian.Uint32(size[:]))
	case n != 0:
		t.Fatalf("connection closed mid-frame after %d bytes", n)
	}
}
