package replica

import (
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// slowDiskFollower stands in for a follower's partition actor whose
// fsyncs complete only when the test says: each append is answered at
// once, and its Durable callback goes to durables for the test to call.
func slowDiskFollower(t *testing.T, sys *actor.ActorSystem) (*actor.PID, <-chan func()) {
	durables := make(chan func(), 16)
	end := int64(0)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *partition.ReplicaPosition:
			m.Reply(partition.ReplicaAt{End: end, LastEpoch: -1, LogStart: 0, Durable: end}, nil)
		case *partition.ReplicaAppend:
			if len(m.Records) > 0 {
				h, err := wire.ParseBatchHeader(m.Records)
				if err != nil {
					m.Reply(0, err)
					return
				}
				end = h.BaseOffset + int64(h.LastOffsetDelta) + 1
				at, report := end, m.Durable
				durables <- func() { report(at, nil) }
			}
			m.Reply(end, nil)
		}
	}))
	t.Cleanup(func() { sys.Root.Stop(pid) })
	return pid, durables
}

// answerWith answers the one fetched partition with no error, high
// watermark 0, records (may be nil) and, if honour, samsa's tag saying
// the durable end was counted.
func answerWith(req *kmsg.FetchRequest, records []byte, honour bool) *kmsg.FetchResponse {
	r := partitionAnswer(req, kerr.None, 0)
	p := &r.Topics[0].Partitions[0]
	p.RecordBatches = records
	if honour {
		p.UnknownTags.Set(wire.FetchDurableHonouredTag, []byte{wire.FetchDurableScheme})
	}
	return r
}

// sent is what a follower's fetch said of its one partition.
type sent struct {
	offset, durable int64
	tagged          bool
	maxWait         int32
}

func sentOf(req *kmsg.FetchRequest) sent {
	p := req.Topics[0].Partitions[0]
	d, ok := wire.FetchDurableEnd(&p.UnknownTags)
	return sent{offset: p.FetchOffset, durable: d, tagged: ok, maxWait: req.MaxWaitMillis}
}

// expectFetch reads the follower's next fetch and checks it is want.
func expectFetch(t *testing.T, l *fakeLeader, want sent, what string) {
	t.Helper()
	select {
	case req := <-l.fetches:
		if got := sentOf(req); got != want {
			t.Fatalf("%s: %+v, want %+v", what, got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the follower sent no fetch", what)
	}
}

// batchLeader answers the follower's fetch number batchAt with a 5-record
// batch at offset 0 and every other with nothing, saying it honours the
// durable end if honour.
func batchLeader(t *testing.T, batchAt int, honour bool) *fakeLeader {
	batch := batchtest.Plain(5, 0)
	return startLeader(t, 17, func(n int, req *kmsg.FetchRequest) *kmsg.FetchResponse {
		if n == batchAt {
			return answerWith(req, batch, honour)
		}
		return answerWith(req, nil, honour)
	})
}

func startFollowing(t *testing.T, leader *fakeLeader) <-chan func() {
	t.Helper()
	sys := actor.NewActorSystem()
	pid, durables := slowDiskFollower(t, sys)
	client := interbroker.New(interbroker.Config{})
	fs := New(Config{Me: 2, Root: sys.Root, Client: client, View: leaderView(t, leader.ln.Addr().String()), Listener: "PLAINTEXT",
		Log: slog.New(slog.DiscardHandler), Backoff: 10 * time.Millisecond})
	fs.Follow(Followed{Topic: "t", ID: [16]byte{1}, Partition: 0, Leader: 1, LeaderEpoch: 1, PID: pid})
	t.Cleanup(func() {
		fs.Close()
		client.Close()
		sys.Shutdown()
	})
	return durables
}

// Against a leader that honours the durable end, the follower fetches
// again while its fsync runs: fetch offset its log end, durable end what
// is fsynced, max wait 0 (a fetch parked at the leader could not report
// the fsync, and an acks=all producer would wait out the max wait). When
// that fetch brings nothing, the next waits for the fsync and then
// reports the durable end with the usual max wait: no spinning.
func TestFollowerFetchesAheadOfItsFsync(t *testing.T) {
	leader := batchLeader(t, 2, true)
	durables := startFollowing(t, leader)
	expectFetch(t, leader, sent{offset: 0, durable: 0, tagged: true, maxWait: 500}, "first fetch")
	expectFetch(t, leader, sent{offset: 0, durable: 0, tagged: true, maxWait: 500}, "second fetch")
	// Offsets 0-4 are appended, their fsync held back.
	expectFetch(t, leader, sent{offset: 5, durable: 0, tagged: true, maxWait: 0}, "the fetch after the append")
	// It brought nothing: the next fetch waits for the fsync.
	(<-durables)()
	expectFetch(t, leader, sent{offset: 5, durable: 5, tagged: true, maxWait: 500}, "the fetch after an empty answer")
}

// Against a leader that does not say it honours the durable end (a
// Kafka 3.9 leader ignores the tag), the follower's fetch offset is its
// durable end: it fetches again only once what it appended is fsynced.
func TestFollowerWaitsForItsFsyncWithoutTheLeadersWord(t *testing.T) {
	leader := batchLeader(t, 1, false)
	durables := startFollowing(t, leader)
	expectFetch(t, leader, sent{offset: 0, durable: 0, tagged: true, maxWait: 500}, "first fetch")
	release := <-durables
	select {
	case req := <-leader.fetches:
		t.Fatalf("fetched %+v before the fsync of what it appended", sentOf(req))
	default:
	}
	release()
	expectFetch(t, leader, sent{offset: 5, durable: 5, tagged: true, maxWait: 500}, "the fetch after the fsync")
}
