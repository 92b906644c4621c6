package testkit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A /proc/net/tcp table: the router's accepted socket (local 9000 is the
// router, remote 41000) and the broker's (local 41000, remote 9000).
func TestScanInodeFindsTheOpenersSocket(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0
   1: 0100007F:2328 0100007F:A028 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 20 4 30 10 -1
   2: 0100007F:A028 0100007F:2328 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0 20 4 30 10 -1
`
	if got := scanInode(strings.NewReader(table), 41000, 9000); got != "333" {
		t.Errorf("scanInode(41000 -> 9000) = %q, want 333", got)
	}
	if got := scanInode(strings.NewReader(table), 41001, 9000); got != "" {
		t.Errorf("scanInode(41001 -> 9000) = %q, want none", got)
	}
	tcp6 := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000100007F:A028 0000000000000000FFFF00000100007F:2328 01 00000000:00000000 00:00000000 00000000     0        0 444 1 0 20 4 30 10 -1
`
	if got := scanInode(strings.NewReader(tcp6), 41000, 9000); got != "444" {
		t.Errorf("scanInode(tcp6, 41000 -> 9000) = %q, want 444", got)
	}
}

// TestBrokerLinksSamsa checks the inter-broker routers against samsa:
// every connection between brokers goes through them and is told apart
// by its opener; a cut broker drops out of the ISR of the partitions the
// others lead (it can fetch from none of them) while clients still reach
// it, and comes back once healed.
func TestBrokerLinksSamsa(t *testing.T) { testBrokerLinks(t, Samsa) }

// TestBrokerLinksKafka39 is the same against Apache Kafka 3.9.1.
func TestBrokerLinksKafka39(t *testing.T) { testBrokerLinks(t, Kafka39) }

func testBrokerLinks(t *testing.T, kind ClusterKind) {
	c := StartCluster(t, ClusterConfig{Kind: kind, Brokers: 3, BrokerLinks: true,
		Properties: map[string]string{"replica.lag.time.max.ms": "3000"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adm := kadm.NewClient(NewClient(t, kgo.SeedBrokers(c.Addrs()...)))
	resp, err := adm.CreateTopic(ctx, 3, 3, nil, "links")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating links: %v", err)
	}
	isrOf := func() map[int32][]int32 {
		td, err := adm.ListTopics(ctx, "links")
		if err != nil {
			return nil
		}
		out := map[int32][]int32{}
		for p, pd := range td["links"].Partitions {
			out[p] = pd.ISR
		}
		return out
	}
	pollUntil(t, ctx, "every replica in sync", func() bool {
		isr := isrOf()
		return len(isr) == 3 && len(isr[0]) == 3 && len(isr[1]) == 3 && len(isr[2]) == 3
	})
	// Every broker follows the other two (RF 3, three leaders), so each
	// router is reached by both others once their fetchers start.
	for _, b := range c.Brokers() {
		var st LinkStats
		pollUntil(t, ctx, fmt.Sprintf("broker %d reached through its router by both other brokers", b.ID()), func() bool {
			var err error
			if st, err = c.BrokerLinkStats(b.ID()); err != nil {
				t.Fatal(err)
			}
			others := 0
			for from, n := range st.Accepted {
				if from >= 0 && from != b.ID() && n > 0 {
					others++
				}
			}
			return others == 2
		})
		if st.Accepted[-1] != 0 {
			t.Errorf("broker %d's router could not tell who opened %d connections: %+v", b.ID(), st.Accepted[-1], st)
		}
	}

	// Not the controller: the others' leaders drop the cut broker from
	// their ISRs by asking the controller.
	ctrl, err := c.Controller()
	if err != nil {
		t.Fatal(err)
	}
	cut := c.Broker(2).ID()
	if cut == ctrl {
		cut = c.Broker(1).ID()
	}
	if err := c.CutFromBrokers(cut); err != nil {
		t.Fatal(err)
	}
	// Kafka keeps a follower that stops fetching in the ISR for as long as
	// it has the leader's whole log: it drops out once it lags by records
	// for replica.lag.time.max.ms. So keep writing (acks=1: with acks=all
	// the writes would wait for the ISR to shrink).
	writer := NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("links"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	pollUntil(t, ctx, fmt.Sprintf("broker %d out of the ISR of the partitions the others lead", cut), func() bool {
		for p := range int32(3) {
			writer.Produce(ctx, &kgo.Record{Partition: p, Value: []byte("x")}, nil)
		}
		td, err := adm.ListTopics(ctx, "links")
		if err != nil {
			return false
		}
		for _, pd := range td["links"].Partitions {
			if pd.Leader != cut && (len(pd.ISR) != 2 || slices.Contains(pd.ISR, cut)) {
				return false
			}
		}
		return true
	})
	// Clients still reach the cut broker.
	direct := kadm.NewClient(NewClient(t, kgo.SeedBrokers(c.BrokerByID(cut).Addr())))
	if _, err := direct.ApiVersions(ctx); err != nil {
		t.Errorf("a client cannot reach cut broker %d: %v", cut, err)
	}
	st, err := c.BrokerLinkStats(cut)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cut+st.Refused == 0 {
		t.Errorf("no connection to cut broker %d was cut or refused: %+v", cut, st)
	}
	if err := c.HealBrokers(cut); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, ctx, "every replica back in sync after healing", func() bool {
		isr := isrOf()
		return len(isr) == 3 && len(isr[0]) == 3 && len(isr[1]) == 3 && len(isr[2]) == 3
	})
}

// pollUntil polls a remote view until cond holds, failing t at ctx's end.
func pollUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
