package actors

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// call sends body through Handle and waits for the decoded answer.
func call(t *testing.T, b *Broker, body kmsg.Request) kmsg.Response {
	t.Helper()
	return callAs(t, b, "", body)
}

// callAs is call from a connection authenticated as principal (""
// anonymous, without a session), from 127.0.0.1.
func callAs(t *testing.T, b *Broker, principal string, body kmsg.Request) kmsg.Response {
	t.Helper()
	var session *wire.Session
	if principal != "" {
		session = &wire.Session{Listener: "PLAINTEXT"}
		session.SetPrincipal(principal)
	}
	done := make(chan *wire.Response, 1)
	b.Handle(&wire.Request{Header: wire.RequestHeader{APIKey: body.Key(), APIVersion: body.GetVersion(), CorrelationID: 1},
		Body: body, Reply: func(r *wire.Response) { done <- r }, Session: session, ClientAddr: "127.0.0.1:40000"})
	r := <-done
	if r == nil {
		t.Fatal("no response")
	}
	raw, err := r.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := body.ResponseKind()
	raw = raw[8:] // size, correlation id
	if resp.IsFlexible() {
		raw = raw[1:] // empty header tags
	}
	if err := resp.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	return resp
}

func createTopic(t *testing.T, b *Broker, name string, partitions int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
	req.Topics = append(req.Topics, rt)
	if resp := call(t, b, req).(*kmsg.CreateTopicsResponse); resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %d", name, resp.Topics[0].ErrorCode)
	}
}

// logSizes returns "topic-partition" -> size from DescribeLogDirs.
func logSizes(t *testing.T, b *Broker) map[string]int64 {
	t.Helper()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.Version = 4
	out := map[string]int64{}
	for _, d := range call(t, b, req).(*kmsg.DescribeLogDirsResponse).Dirs {
		for _, tp := range d.Topics {
			for _, p := range tp.Partitions {
				out[tp.Topic+"-"+string(rune('0'+p.Partition))] = p.Size
			}
		}
	}
	return out
}
