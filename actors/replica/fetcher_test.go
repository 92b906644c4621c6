package replica

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// fakeLeader is a Kafka server that advertises Fetch up to maxFetch and
// answers each Fetch through answer, reporting what it read on fetches.
type fakeLeader struct {
	ln       net.Listener
	maxFetch int16
	fetches  chan *kmsg.FetchRequest
	answer   func(n int, req *kmsg.FetchRequest) *kmsg.FetchResponse
	n        atomic.Int32
	wg       sync.WaitGroup
	// done ends the serving of a test that stopped reading fetches (it
	// fetched on meanwhile: this leader answers at once, never parks).
	done chan struct{}
}

func startLeader(t *testing.T, maxFetch int16, answer func(n int, req *kmsg.FetchRequest) *kmsg.FetchResponse) *fakeLeader {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &fakeLeader{ln: ln, maxFetch: maxFetch, fetches: make(chan *kmsg.FetchRequest, 64), answer: answer, done: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			l.wg.Add(1)
			go l.serve(nc)
		}
	}()
	t.Cleanup(func() { close(l.done); ln.Close(); l.wg.Wait() })
	return l
}

func (l *fakeLeader) serve(nc net.Conn) {
	defer l.wg.Done()
	defer nc.Close()
	for {
		var size [4]byte
		if _, err := io.ReadFull(nc, size[:]); err != nil {
			return
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(nc, frame); err != nil {
			return
		}
		req, err := wire.DecodeRequest(frame)
		if err != nil {
			return
		}
		var resp kmsg.Response
		switch body := req.Body.(type) {
		case *kmsg.ApiVersionsRequest:
			r := kmsg.NewPtrApiVersionsResponse()
			r.Version = body.Version
			r.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: wire.KeyApiVersions, MaxVersion: 3}, {ApiKey: 1, MinVersion: 4, MaxVersion: l.maxFetch}}
			resp = r
		case *kmsg.FetchRequest:
			select {
			case l.fetches <- body:
			case <-l.done:
				return
			}
			r := l.answer(int(l.n.Add(1)), body)
			r.Version = body.Version
			resp = r
		default:
			return
		}
		if _, err := nc.Write(wire.AppendResponse(nil, req.Header.CorrelationID, resp)); err != nil {
			return
		}
	}
}

// fakeFollower stands in for the follower's partition actor: it is at
// offset 0 and reports every append's leader high watermark.
func fakeFollower(t *testing.T, sys *actor.ActorSystem) (*actor.PID, <-chan int64) {
	hws := make(chan int64, 16)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *partition.ReplicaPosition:
			m.Reply(partition.ReplicaAt{End: 0, LastEpoch: -1, LogStart: 0, Durable: 0}, nil)
		case *partition.ReplicaAppend:
			hws <- m.LeaderHW
			m.Reply(0, nil)
		}
	}))
	t.Cleanup(func() { sys.Root.Stop(pid) })
	return pid, hws
}

// leaderView is a cluster view where broker 1 is at addr.
func leaderView(t *testing.T, addr string) *cluster.Table {
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version = 8
	lb := kmsg.NewUpdateMetadataRequestLiveBroker()
	lb.ID = 1
	ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
	ep.Host, ep.Port, ep.ListenerName = host, int32(p), "PLAINTEXT"
	lb.Endpoints = append(lb.Endpoints, ep)
	um.LiveBrokers = append(um.LiveBrokers, lb)
	v, code := cluster.Empty("c").Apply(um)
	if code != kerr.None {
		t.Fatal(code)
	}
	tab := &cluster.Table{}
	tab.Publish(v)
	return tab
}

// partitionAnswer answers the one fetched partition with code and hw,
// naming its topic the way the request did.
func partitionAnswer(req *kmsg.FetchRequest, code kerr.Code, hw int64) *kmsg.FetchResponse {
	r := kmsg.NewPtrFetchResponse()
	rt := req.Topics[0]
	t := kmsg.NewFetchResponseTopic()
	t.Topic, t.TopicID = rt.Topic, rt.TopicID
	p := kmsg.NewFetchResponseTopicPartition()
	p.Partition, p.ErrorCode, p.HighWatermark, p.LastStableOffset, p.LogStartOffset = rt.Partitions[0].Partition, code.Int16(), hw, hw, 0
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// TestFollowerFetchVersions: followers send Fetch as Kafka 3.9's do (v17,
// ReplicaState with the broker epoch, topics by id, Kafka's sizes), go
// down to what an older leader serves (by name at 12), retry a partition
// the leader answers UNKNOWN_TOPIC_ID (it has not had its LeaderAndIsr
// yet), and hand the answer, found by id or by name, to the partition.
func TestFollowerFetchVersions(t *testing.T) {
	id := [16]byte{1, 2, 3}
	for _, tc := range []struct {
		leaderMax, want int16
		noID            bool
	}{{17, 17, false}, {18, 17, false}, {13, 13, false}, {12, 12, false}, {17, 12, true}} {
		leader := startLeader(t, tc.leaderMax, func(n int, req *kmsg.FetchRequest) *kmsg.FetchResponse {
			if n == 1 {
				return partitionAnswer(req, kerr.UnknownTopicID, -1)
			}
			return partitionAnswer(req, kerr.None, 5)
		})
		sys := actor.NewActorSystem()
		pid, hws := fakeFollower(t, sys)
		client := interbroker.New(interbroker.Config{})
		var epoch atomic.Int64
		epoch.Store(55)
		fs := New(Config{Me: 2, Root: sys.Root, Client: client, View: leaderView(t, leader.ln.Addr().String()), Listener: "PLAINTEXT",
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Backoff: 10 * time.Millisecond, Epoch: &epoch})
		p := Followed{Topic: "t", ID: id, Partition: 3, Leader: 1, LeaderEpoch: 4, PID: pid}
		if tc.noID {
			p.ID = [16]byte{}
		}
		fs.Follow(p)
		for i := range 2 {
			req := <-leader.fetches
			if req.Version != tc.want {
				t.Fatalf("leader max %d: fetch v%d, want v%d", tc.leaderMax, req.Version, tc.want)
			}
			if replicaIDOf(req) != 2 || req.Version >= 15 && req.ReplicaState.Epoch != 55 {
				t.Fatalf("v%d: replica %d / state %+v", req.Version, req.ReplicaID, req.ReplicaState)
			}
			if req.MaxWaitMillis != 500 || req.MinBytes != 1 || req.MaxBytes != 10485760 || req.Rack != "" {
				t.Fatalf("v%d fetch shape: wait %d min %d max %d rack %q", req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.Rack)
			}
			rp := req.Topics[0].Partitions[0]
			if rp.Partition != 3 || rp.CurrentLeaderEpoch != 4 || rp.PartitionMaxBytes != 1048576 || rp.LogStartOffset != 0 {
				t.Fatalf("v%d fetch %d partition %+v", req.Version, i, rp)
			}
			if req.Version >= 13 && req.Topics[0].TopicID != id || req.Version < 13 && req.Topics[0].Topic != "t" {
				t.Fatalf("v%d: topic %+v", req.Version, req.Topics[0])
			}
		}
		select {
		case hw := <-hws:
			if hw != 5 {
				t.Fatalf("v%d: the follower got high watermark %d, want 5", tc.want, hw)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("v%d: the answer never reached the partition", tc.want)
		}
		fs.Close()
		client.Close()
		sys.Shutdown()
	}
}

// replicaIDOf is the follower id a fetch carries at its version.
func replicaIDOf(req *kmsg.FetchRequest) int32 {
	if req.Version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}
