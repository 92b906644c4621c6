package actors_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// rawConn is one connection speaking requests at pinned versions as one
// client id.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	fmt  *kmsg.RequestFormatter
	corr int32
}

func dialRaw(t *testing.T, addr, clientID string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, conn: c, fmt: kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))}
}

// send writes req and returns its correlation id.
func (c *rawConn) send(req kmsg.Request) int32 {
	c.t.Helper()
	c.corr++
	if _, err := c.conn.Write(c.fmt.AppendRequest(nil, req, c.corr)); err != nil {
		c.t.Fatal(err)
	}
	return c.corr
}

// recv reads the answer to req within wait; ok is false when none came
// in time (the connection stayed open).
func (c *rawConn) recv(req kmsg.Request, resp kmsg.Response, wait time.Duration) (ok bool) {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(wait))
	var size [4]byte
	if _, err := io.ReadFull(c.conn, size[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return false
		}
		c.t.Fatalf("reading the answer to %s: %v", kmsg.NameForKey(req.Key()), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.conn, body); err != nil {
		c.t.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != c.corr {
		c.t.Fatalf("answer to correlation id %d, want %d", got, c.corr)
	}
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		body = body[1:]
	}
	if err := resp.ReadFrom(body[4:]); err != nil {
		c.t.Fatalf("%s answer does not decode: %v", kmsg.NameForKey(req.Key()), err)
	}
	return true
}

func fetchFrom(version int16, topic string, offset int64, sessionID, epoch int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = version, -1, 100, 1<<20
	req.SessionID, req.SessionEpoch = sessionID, epoch
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.LogStartOffset = offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// A fetch over consumer_byte_rate is answered as Kafka answers it
// (KIP-219): no partitions, throttle_time_ms set, and its bytes not
// counted (the next fetch of the same data is throttled alike, not
// worse); a full fetch that opened a session gets session id 0 back,
// an incremental one keeps its session.
func TestThrottledFetchIsEmpty(t *testing.T) {
	n := testkit.StartInProcess(t, "log.dirs", t.TempDir())
	adm, _ := n.Admin(t)
	if _, err := adm.CreateTopics(ctxT(t), 1, 1, nil, "fetchq"); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.DefaultProduceTopic("fetchq"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range 3 { // three batches of 4000 bytes
		if err := cl.ProduceSync(ctxT(t), &kgo.Record{Value: make([]byte, 4000)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// 1000 B/s: a fetch may take 10 s worth (the window cap) and the
	// rate over the 10 s a young rate spans stays within it for two
	// batches, not three.
	setClientQuotaTo(t, adm, "slowf", "consumer_byte_rate", 1000, false)

	c := dialRaw(t, n.Addr, "slowf")
	first := fetchFrom(12, "fetchq", 0, 0, 0) // opens a session
	c.send(first)
	resp := kmsg.NewPtrFetchResponse()
	if !c.recv(first, resp, 10*time.Second) {
		t.Fatal("no answer to the first fetch")
	}
	if resp.ThrottleMillis != 0 || resp.SessionID == 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("first fetch: throttle %d, session %d, %d topics: want records within the quota in a new session", resp.ThrottleMillis, resp.SessionID, len(resp.Topics))
	}
	session := resp.SessionID
	got := len(resp.Topics[0].Partitions[0].RecordBatches)

	for i, req := range []*kmsg.FetchRequest{
		fetchFrom(12, "fetchq", 0, 0, 0),       // full, new session
		fetchFrom(12, "fetchq", 0, 0, 0),       // again: the last one's bytes were not counted
		fetchFrom(12, "fetchq", 0, session, 1), // incremental, in the first session
	} {
		// Each on a new connection: the last one is muted.
		c := dialRaw(t, n.Addr, "slowf")
		c.send(req)
		resp := kmsg.NewPtrFetchResponse()
		if !c.recv(req, resp, 10*time.Second) {
			t.Fatalf("fetch %d: no answer", i+2)
		}
		wantSession := int32(0)
		if req.SessionEpoch > 0 {
			wantSession = session
		}
		if resp.ThrottleMillis <= 0 || len(resp.Topics) != 0 || resp.ErrorCode != 0 || resp.SessionID != wantSession {
			t.Fatalf("fetch %d (after %d bytes of a 1000 B/s quota): throttle %d ms, %d topics, error %d, session %d (want %d): want Kafka's empty throttled answer",
				i+2, got*4000, resp.ThrottleMillis, len(resp.Topics), resp.ErrorCode, resp.SessionID, wantSession)
		}
	}
}

// An acks=0 produce over producer_byte_rate gets no answer, as any
// acks=0 produce, but its connection is muted for the throttle time (so
// a request after it waits there), as Kafka mutes the channel; its
// records are appended and another connection is served meanwhile.
func TestAcksZeroOverQuotaMutes(t *testing.T) {
	n := testkit.StartInProcess(t, "log.dirs", t.TempDir())
	adm, _ := n.Admin(t)
	if _, err := adm.CreateTopics(ctxT(t), 1, 1, nil, "acks0q"); err != nil {
		t.Fatal(err)
	}
	// 1 B/s: 4000 bytes at once calls for a throttle of more than an hour.
	setClientQuotaTo(t, adm, "acks0", "producer_byte_rate", 1, false)

	c := dialRaw(t, n.Addr, "acks0")
	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks, produce.TimeoutMillis = 9, 0, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "acks0q"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = batchtest.Build(batchtest.Values(time.Now().UnixMilli(), make([]byte, 4000)))
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	c.send(produce)
	// The produce has no answer to wait for: wait for its record. (The
	// connection goes on decoding until the produce is done, as
	// samsa pipelines a connection's requests where Kafka reads one at a
	// time; the mute starts then.)
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	other := dialRaw(t, n.Addr, "acks0")
	for {
		ends, err := adm.ListEndOffsets(ctxT(t), "acks0q")
		if err != nil {
			t.Fatal(err)
		}
		if o, _ := ends.Lookup("acks0q", 0); o.Offset == 1 {
			break
		}
		select {
		case <-ctxT(t).Done():
			t.Fatal("the acks=0 produce's record never arrived")
		case <-time.After(10 * time.Millisecond):
		}
	}
	// Another connection of the same client is served.
	other.send(meta)
	if !other.recv(meta, kmsg.NewPtrMetadataResponse(), 10*time.Second) {
		t.Fatal("another connection of the same client was not served")
	}
	c.send(meta)
	if c.recv(meta, kmsg.NewPtrMetadataResponse(), 3*time.Second) {
		t.Fatal("a request after an acks=0 produce far over its quota was answered: the connection was not muted")
	}
}
