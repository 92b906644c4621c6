package actors_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// TestDeleteTopicsUnderLongPollingFetch is the scenario a consumer group
// tripped over: one connection long-polls 100 topics (max wait a minute),
// then deletes them all and asks ListOffsets four times. Responses leave
// in order, so if the fetch were never answered, nothing behind it would
// be either. The fetch must be answered as its partitions go (long before
// the max wait), the deletion and the ListOffsets behind it must follow,
// and a graceful shutdown afterwards must not wait for anything.
func TestDeleteTopicsUnderLongPollingFetch(t *testing.T) {
	n := testkit.StartInProcess(t)
	adm, _ := n.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topics = 100
	var names []string
	for i := range topics {
		names = append(names, fmt.Sprintf("poll-%03d", i))
	}
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, names...); err != nil {
		t.Fatal(err)
	}

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.ReplicaID, fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes, fetch.SessionEpoch = 12, -1, 60_000, 1, 1<<20, -1
	for _, name := range names {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = name
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		fetch.Topics = append(fetch.Topics, rt)
	}
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version, del.TimeoutMillis = 6, 30_000
	for _, name := range names {
		dt := kmsg.NewDeleteTopicsRequestTopic()
		dt.Topic = kmsg.StringPtr(name)
		del.Topics = append(del.Topics, dt)
	}
	reqs := []kmsg.Request{fetch, del}
	for range 4 {
		lo := kmsg.NewPtrListOffsetsRequest()
		lo.Version, lo.ReplicaID = 9, -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = names[0]
		rt.Partitions = append(rt.Partitions, kmsg.NewListOffsetsRequestTopicPartition())
		lo.Topics = append(lo.Topics, rt)
		reqs = append(reqs, lo)
	}

	c, err := net.DialTimeout("tcp", n.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Well under the fetch's max wait: answers that waited for it would
	// miss this deadline.
	c.SetDeadline(time.Now().Add(20 * time.Second))
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("delete-under-fetch"))
	var out []byte
	for i, r := range reqs {
		// AppendRequest writes the frame's size at dst[0]: one frame per
		// call, pipelined by concatenating them.
		out = append(out, f.AppendRequest(nil, r, int32(i))...)
	}
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		resp := readResponse(t, c, r, int32(i))
		switch resp := resp.(type) {
		case *kmsg.FetchResponse:
			// The fetch ends as the first of its partitions goes (a
			// partition error answers a fetch, as in Kafka); the others
			// are answered as they stand then, without records.
			gone := 0
			for _, tp := range resp.Topics {
				for _, p := range tp.Partitions {
					switch {
					case p.ErrorCode == kerr.UnknownTopicOrPartition.Code:
						gone++
					case p.ErrorCode != 0 || len(p.RecordBatches) != 0:
						t.Errorf("fetch answer for %s-%d: %v with %d bytes", tp.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode), len(p.RecordBatches))
					}
				}
			}
			if gone == 0 {
				t.Error("the fetch was answered without any deleted partition: it did not end because of the deletion")
			}
		case *kmsg.DeleteTopicsResponse:
			for _, tp := range resp.Topics {
				if tp.ErrorCode != 0 {
					t.Errorf("delete %v: %v", tp.Topic, kerr.ErrorForCode(tp.ErrorCode))
				}
			}
		case *kmsg.ListOffsetsResponse:
			// Decoded while the deletion runs (requests are served
			// concurrently; only responses are ordered): the partition is
			// there, or gone.
			if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 && code != kerr.UnknownTopicOrPartition.Code {
				t.Errorf("ListOffsets during the deletion: %v", kerr.ErrorForCode(code))
			}
		}
	}
	// The graceful shutdown has nothing left in flight to wait for.
	n.Close()
}

// readResponse reads the next response frame from c, checks it answers
// correlation id corr, and decodes it as req's response.
func readResponse(t *testing.T, c net.Conn, req kmsg.Request, corr int32) kmsg.Response {
	t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("%s (correlation %d): no response: %v", kmsg.NameForKey(req.Key()), corr, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		t.Fatalf("response for correlation %d, want %d", got, corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() {
		r := kbin.Reader{Src: body}
		kmsg.SkipTags(&r)
		body = r.Src
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decode %s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}
