package actors_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// TestNewPartitionAnsweredOnceAnnounced: a partition that Metadata names
// (with a leader) is one ListOffsets can ask at once, while its topic is
// still being created by another client: never UNKNOWN_TOPIC_OR_PARTITION
// (a librdkafka consumer resetting to the beginning of a just-created
// topic tripped over that in Kafka's cooperative rebalance tests). One
// client creates topics; another watches Metadata for each and asks
// ListOffsets the moment it appears.
func TestNewPartitionAnsweredOnceAnnounced(t *testing.T) {
	n := testkit.StartInProcess(t)
	_, creator := n.Admin(t)
	_, watcher := n.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 30 {
		name := fmt.Sprintf("fresh-%02d", i)
		created := make(chan error, 1)
		go func() {
			req := kmsg.NewPtrCreateTopicsRequest()
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 4, 1
			req.Topics = append(req.Topics, rt)
			_, err := req.RequestWith(ctx, creator)
			created <- err
		}()
		for announced := false; !announced; {
			md := kmsg.NewPtrMetadataRequest()
			md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(name)}}
			resp, err := md.RequestWith(ctx, watcher)
			if err != nil {
				t.Fatal(err)
			}
			tp := resp.Topics[0]
			if tp.ErrorCode != 0 || len(tp.Partitions) == 0 || tp.Partitions[0].Leader < 0 {
				continue // not announced yet: ask again (each ask is a round trip)
			}
			announced = true
			for _, p := range tp.Partitions {
				lo := kmsg.NewPtrListOffsetsRequest()
				lrt := kmsg.NewListOffsetsRequestTopic()
				lrt.Topic = name
				lp := kmsg.NewListOffsetsRequestTopicPartition()
				lp.Partition, lp.Timestamp = p.Partition, -2
				lrt.Partitions = append(lrt.Partitions, lp)
				lo.Topics = append(lo.Topics, lrt)
				lr, err := lo.RequestWith(ctx, watcher)
				if err != nil {
					t.Fatal(err)
				}
				if code := lr.Topics[0].Partitions[0].ErrorCode; code == kerr.UnknownTopicOrPartition.Code {
					t.Fatalf("%s-%d: Metadata announced it, ListOffsets answered UNKNOWN_TOPIC_OR_PARTITION", name, p.Partition)
				} else if code != 0 && !kerr.IsRetriable(kerr.ErrorForCode(code)) {
					t.Fatalf("%s-%d: ListOffsets answered %v", name, p.Partition, kerr.ErrorForCode(code))
				}
			}
		}
		if err := <-created; err != nil {
			t.Fatal(err)
		}
	}
}
