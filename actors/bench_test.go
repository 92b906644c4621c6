package actors_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire"
)

// BenchmarkMetadataAllTopics measures one Metadata v12 request for every
// topic (10 topics × 4 partitions) through Broker.Handle, the metadata
// actor and response encoding, without sockets (the in-process broker's
// listener stays idle).
func BenchmarkMetadataAllTopics(b *testing.B) {
	br := testkit.StartInProcess(b, "num.partitions", "4").Broker
	done := make(chan *wire.Response, 1)
	send := func(body kmsg.Request) *wire.Response {
		req := &wire.Request{Header: wire.RequestHeader{APIKey: body.Key(), APIVersion: body.GetVersion()}, Body: body,
			Reply: func(r *wire.Response) { done <- r }}
		br.Handle(req)
		return <-done
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	create.Version = 7
	for i := range 10 {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = fmt.Sprintf("bench-%02d", i), 4, 1
		create.Topics = append(create.Topics, t)
	}
	send(create)
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	meta.Topics = nil
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := send(meta); r.Len() < 1000 {
			b.Fatalf("short response: %d bytes", r.Len())
		}
	}
}
