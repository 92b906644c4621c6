package replication

import (
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// A samsa broker and an Apache Kafka 3.9.1 broker replicate one topic
// between them, each leading one partition, with min.insync.replicas=2 so
// that every acks=all write needs the other system's follower. samsa's
// follower sends its durable end in a tagged field Kafka does not know
// (docs/cluster-reference.md): Kafka must skip it and count the fetch
// offset, which samsa keeps at its durable end since Kafka never says it
// honours the tag. samsa's leader must count a Kafka follower's fetch
// offset, having no tag from it. Every record is acknowledged and read
// back, and both replicas stay in each ISR.
func TestDurableReplicationBesideKafka(t *testing.T) {
	const samsaID, records = 7, 2000
	testkit.RequireKafka39(t)
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Kafka39, Brokers: 1})
	kafkaID := c.Broker(0).ID()
	samsa := testkit.StartBroker(t, testkit.BrokerConfig{Args: []string{"--zookeeper.connect", c.ZooKeeperConnect(),
		"--broker.id", fmt.Sprint(samsaID)}})
	ctx := t.Context()
	if _, err := c.WaitForBrokers(2); err != nil {
		t.Fatal(err)
	}
	seeds := kgo.SeedBrokers(c.Broker(0).Addr(), samsa.Addr())
	admClient := testkit.NewClient(t, seeds)
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, -1, -1
	for p, replicas := range [][]int32{{kafkaID, samsaID}, {samsaID, kafkaID}} {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = int32(p), replicas
		ct.ReplicaAssignment = append(ct.ReplicaAssignment, ra)
	}
	mis := kmsg.NewCreateTopicsRequestTopicConfig()
	mis.Name, mis.Value = "min.insync.replicas", kmsg.StringPtr("2")
	ct.Configs = append(ct.Configs, mis)
	create.Topics = append(create.Topics, ct)
	if resp, err := create.RequestWith(ctx, admClient); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	adm := kadm.NewClient(admClient)
	waitISR(t, ctx, adm, 2)
	for p, want := range []int32{kafkaID, samsaID} {
		if got := leaderOf(t, ctx, adm, int32(p)); got != want {
			t.Fatalf("partition %d led by %d, want %d", p, got, want)
		}
	}

	prod := testkit.NewClient(t, seeds, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var mu sync.Mutex
	acked := map[string]bool{}
	for i := range records {
		v := fmt.Sprintf("m%05d", i)
		prod.Produce(ctx, &kgo.Record{Value: []byte(v), Partition: int32(i % 2)}, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("record %s: %v", v, err)
				return
			}
			acked[v] = true
		})
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if len(acked) != records {
		t.Fatalf("%d of %d records acknowledged", len(acked), records)
	}
	waitISR(t, ctx, adm, 2)
	readBackExactlyOnce(t, ctx, c, acked)
}
