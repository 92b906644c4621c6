package api

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/actors/metrics"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Produce (v3-11; 0-2 advertised for feature detection, refused by the
// decoder).
var produce = API{Key: kmsg.Produce, Handle: handleProduce}

// handleProduce splits a Produce request by partition and sends each part
// to its partition actor; the last actor to answer encodes the response
// (acks=0: no response, once every part has been appended, since the
// batches alias the request frame; a failed part closes the connection).
// With client quotas set, the request's size counts against the
// client's producer_byte_rate, and a client over it is told to wait and
// held back for that long (actors/quota; acks=0 produces are not
// throttled: they have no response to carry the time).
// Runs on a gnet loop: never blocks.
//
// Unknown topics and partitions are answered UNKNOWN_TOPIC_OR_PARTITION
// here, partitions whose actor is gone NOT_LEADER_OR_FOLLOWER, and an acks
// value other than -1, 0 or 1 INVALID_REQUIRED_ACKS for every partition.
// If the partitions do not all answer within the gather timeout (an actor
// died), every partition asked is answered REQUEST_TIMED_OUT (fanOut).
func handleProduce(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.ProduceRequest)
	resp := body.ResponseKind().(*kmsg.ProduceResponse)
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(body.Topics))
	badAcks := body.Acks != -1 && body.Acks != 0 && body.Acks != 1
	routes := s.Env.Routes.Load()
	txnID := ""
	if body.TransactionID != nil {
		txnID = *body.TransactionID
	}

	if txnID != "" && !authorized(s, req, acl.OpWrite, acl.ResourceTransactionalID, txnID) {
		answerProduce(req, body, resp, kerr.TransactionalIDAuthorizationFailed)
		return
	}
	auth := s.Env.Auth
	n := 0
	for i := range body.Topics {
		n += len(body.Topics[i].Partitions)
	}
	readers := &frameReaders{req: req}
	parts := newFanOut(n, func(p *kmsg.ProduceResponseTopicPartition) {
		p.ErrorCode, p.BaseOffset, p.LogAppendTime, p.ErrorMessage, p.ErrorRecords = int16(kerr.RequestTimedOut), -1, -1, nil, nil
	})
	for i := range body.Topics {
		rt := &body.Topics[i]
		st := &resp.Topics[i]
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		tr := routes.Topics[rt.Topic]
		// Kafka's own topics are written by their coordinators only
		// (they send to the partition actor directly), never by clients.
		internal := metadata.IsInternalTopic(rt.Topic)
		// Without an authorizer this is the produce path's one extra
		// nil check per topic.
		denied := auth != nil && !auth.Authorize(req.Session.Principal(), req.ClientAddr, acl.OpWrite, acl.ResourceTopic, rt.Topic)
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			sp := &st.Partitions[j]
			sp.Default()
			sp.Partition = rp.Partition
			sp.BaseOffset = -1
			switch {
			case denied:
				sp.ErrorCode = int16(kerr.TopicAuthorizationFailed)
			case badAcks:
				sp.ErrorCode = int16(kerr.InvalidRequiredAcks)
			case internal:
				sp.ErrorCode = int16(kerr.InvalidTopicException)
				sp.ErrorMessage = kmsg.StringPtr("Cannot append to internal topic " + rt.Topic + ".")
			case tr == nil || rp.Partition < 0 || int(rp.Partition) >= len(tr.Partitions):
				sp.ErrorCode = int16(kerr.UnknownTopicOrPartition)
			case tr.Partitions[rp.Partition] == nil:
				sp.ErrorCode = int16(kerr.NotLeaderOrFollower)
			default:
				readers.n++
				parts.add(tr.Partitions[rp.Partition], sp, func(out *kmsg.ProduceResponseTopicPartition) partition.Request {
					return &partition.ProduceRequest{Records: rp.Records, Version: body.Version, Acks: body.Acks, TransactionalID: txnID, Out: out, RecordsRead: readers.done}
				})
			}
		}
	}
	readers.left.Store(readers.n)
	size := len(req.Frame) // what producer_byte_rate counts, read before the frame is released
	parts.send(s.Env, func(timedOut bool) {
		if readers.n == 0 {
			req.ReleaseFrame() // no partition was asked
		}
		countProduceErrors(s.Env.Metrics, resp)
		if body.Acks == 0 {
			ackZero(s, req, resp, size, timedOut)
			return
		}
		// Timed out, a partition may still be reading: no remote time then.
		if !timedOut && !readers.lastRead.IsZero() {
			req.Remote = time.Since(readers.lastRead) // durability and the ISR, after the last append
		}
		if q := s.Env.Quotas; q.Enabled() {
			env.ReplyThrottled(req, resp, q.Record(quota.Produce, req.Session.Principal(), req.Header.ClientID, float64(size), s.Env.Now()))
			return
		}
		env.Reply(req, resp)
	})
}

// ackZero finishes an acks=0 produce, which gets no response. If a
// partition failed, the connection is closed (after the responses to
// earlier requests), as Kafka does: the client reads no responses, and a
// dropped connection is what makes it refresh its metadata and notice.
// After a timeout the outcome is unknown and nothing is closed.
func ackZero(s *Services, req *wire.Request, resp *kmsg.ProduceResponse, size int, timedOut bool) {
	const logged = 8 // failed partitions named in the log line
	var failed []any // partition, error name, ...
	if !timedOut {
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 && len(failed) < 2*logged {
					failed = append(failed, t.Topic+"-"+strconv.Itoa(int(p.Partition)), kerr.Code(p.ErrorCode).String())
				}
			}
		}
	}
	if len(failed) == 0 {
		// Over producer_byte_rate an acks=0 producer gets no answer
		// either, but its connection is muted for the throttle time, as
		// Kafka mutes its channel (request_percentage spares acks=0).
		if q := s.Env.Quotas; q.Enabled() {
			if d := q.Record(quota.Produce, req.Session.Principal(), req.Header.ClientID, float64(size), s.Env.Now()); d > 0 {
				req.Reply(&wire.Response{MuteFor: d})
				return
			}
		}
		req.Reply(nil)
		return
	}
	s.Env.Log.Info("closing the connection of an acks=0 producer after a failed produce",
		append([]any{"client", req.ClientAddr, "client_id", req.Header.ClientID, "correlation_id", req.Header.CorrelationID}, failed...)...)
	req.Reply(&wire.Response{CloseAfter: true})
}

// frameReaders hands a produce request's frame back for reuse once the
// last partition asked has read its records (appended, copying them to
// its log, or refused them). The response holds none of the frame's
// bytes (its strings are copies). For acks=all that is well before the
// answer, which waits for the ISR: the frame is not held across the
// replication round trip. A partition that never finishes (its actor
// died: the request times out) leaves the frame to the GC.
//
// The last read also ends the produce's local time: what follows is its
// remote time (the request metrics' RemoteTime), read once every
// partition has answered (after their answers, so after lastRead is set).
type frameReaders struct {
	req      *wire.Request
	n        int64        // partitions asked, counted before any is sent
	left     atomic.Int64 // of them, those still reading
	lastRead time.Time    // when the last of them read its records
}

func (f *frameReaders) done() {
	if f.left.Add(-1) == 0 {
		f.lastRead = time.Now()
		f.req.ReleaseFrame()
	}
}

// answerProduce answers every partition of a produce with code, at once
// (acks=0: the connection is closed, as for any failed acks=0 produce).
func answerProduce(req *wire.Request, body *kmsg.ProduceRequest, resp *kmsg.ProduceResponse, code kerr.Code) {
	resp.Topics = resp.Topics[:0]
	for i := range body.Topics {
		t := kmsg.NewProduceResponseTopic()
		t.Topic = body.Topics[i].Topic
		for _, rp := range body.Topics[i].Partitions {
			p := kmsg.NewProduceResponseTopicPartition()
			p.Partition, p.ErrorCode, p.BaseOffset = rp.Partition, int16(code), -1
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	req.ReleaseFrame()
	if body.Acks == 0 {
		req.Reply(&wire.Response{CloseAfter: true})
		return
	}
	env.Reply(req, resp)
}

// countProduceErrors counts the partitions answered with an error (the
// metrics' ErrorsPerSec): a loop over the partitions of the request, no
// lookup.
func countProduceErrors(m *metrics.Broker, resp *kmsg.ProduceResponse) {
	if m == nil {
		return
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if code := resp.Topics[i].Partitions[j].ErrorCode; code != 0 {
				m.CountError(resp.Key(), kerr.Code(code))
			}
		}
	}
}
