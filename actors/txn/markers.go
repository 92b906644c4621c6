package txn

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire/kerr"
)

// MarkerSender delivers a transaction's markers to the leaders of its
// partitions, as Kafka's TransactionMarkerChannelManager: each partition
// is retried until its leader has the marker (or the partition is gone),
// with back-off, for as long as it takes; then the coordinator is told.
type MarkerSender struct {
	env *env.Env
	// Remote sends a WriteTxnMarkers to another broker (cluster mode);
	// nil when every partition is local.
	Remote func(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error)
	// Written, when set, is told of every marker a local partition of
	// __consumer_offsets took (the group coordinator completes the
	// transaction's offsets).
	Written func(tp TopicPartition, pid int64, commit bool)
}

// NewMarkerSender returns a sender for local partitions.
func NewMarkerSender(e *env.Env) *MarkerSender { return &MarkerSender{env: e} }

// Back-off between rounds of a transaction's markers.
const (
	markerRetryMin = 50 * time.Millisecond
	markerRetryMax = 2 * time.Second
)

// Send delivers mk's markers and calls done once every partition has
// its marker. It returns at once (the work runs on its own goroutine).
func (s *MarkerSender) Send(mk Markers, done func()) {
	go s.run(mk, done)
}

func (s *MarkerSender) run(mk Markers, done func()) {
	left := mk.Partitions
	wait := markerRetryMin
	for {
		left = s.round(mk, left)
		if len(left) == 0 {
			done()
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, markerRetryMax)
	}
}

// round sends one try for the partitions left and returns those still
// without their marker.
func (s *MarkerSender) round(mk Markers, left []TopicPartition) []TopicPartition {
	local, remote := s.split(left)
	var again []TopicPartition
	if len(local) > 0 {
		ch := make(chan []kerr.Code, 1)
		WriteLocal(s.env, mk.ProducerID, mk.ProducerEpoch, mk.Commit, mk.CoordinatorEpoch, local, func(codes []kerr.Code) { ch <- codes })
		codes := <-ch
		for i, tp := range local {
			switch {
			case codes[i] == kerr.None:
				if s.Written != nil && tp.Topic == coordinator.OffsetsTopic {
					s.Written(tp, mk.ProducerID, mk.Commit)
				}
			case s.gone(tp, codes[i]):
			default:
				again = append(again, tp)
			}
		}
	}
	for broker, tps := range remote {
		again = append(again, s.sendRemote(mk, broker, tps)...)
	}
	return again
}

// split sorts partitions into those this broker leads (or, alone, has)
// and those other brokers lead, by leader.
func (s *MarkerSender) split(tps []TopicPartition) (local []TopicPartition, remote map[int32][]TopicPartition) {
	if s.env.Cluster == nil || s.Remote == nil {
		return tps, nil
	}
	v := s.env.Cluster.Load()
	self := s.env.BrokerID()
	for _, tp := range tps {
		leader := int32(-1)
		if v != nil {
			if p := v.Partition(tp.Topic, tp.Partition); p != nil {
				leader = p.Leader
			}
		}
		if leader == self || leader < 0 {
			local = append(local, tp) // no leader known: the local answer says what to do
			continue
		}
		if remote == nil {
			remote = map[int32][]TopicPartition{}
		}
		remote[leader] = append(remote[leader], tp)
	}
	return local, remote
}

// gone reports whether tp no longer exists, so its marker is not owed
// (Kafka drops the markers of deleted partitions).
func (s *MarkerSender) gone(tp TopicPartition, code kerr.Code) bool {
	if code != kerr.UnknownTopicOrPartition {
		return false
	}
	if s.env.Cluster != nil {
		if v := s.env.Cluster.Load(); v != nil {
			return v.Partition(tp.Topic, tp.Partition) == nil
		}
		return false
	}
	_, code = s.env.Routes.Load().Lookup(tp.Topic, tp.Partition)
	return code == kerr.UnknownTopicOrPartition
}

func (s *MarkerSender) sendRemote(mk Markers, broker int32, tps []TopicPartition) []TopicPartition {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = mk.ProducerID, mk.ProducerEpoch, mk.Commit, mk.CoordinatorEpoch
	for _, tp := range tps {
		if n := len(m.Topics); n > 0 && m.Topics[n-1].Topic == tp.Topic {
			m.Topics[n-1].Partitions = append(m.Topics[n-1].Partitions, tp.Partition)
			continue
		}
		t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		t.Topic, t.Partitions = tp.Topic, []int32{tp.Partition}
		m.Topics = append(m.Topics, t)
	}
	req.Markers = append(req.Markers, m)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := s.Remote(ctx, broker, req)
	if err != nil || len(resp.Markers) != 1 {
		return tps
	}
	var again []TopicPartition
	for _, t := range resp.Markers[0].Topics {
		for _, p := range t.Partitions {
			tp := TopicPartition{t.Topic, p.Partition}
			if code := kerr.Code(p.ErrorCode); code != kerr.None && !s.gone(tp, code) {
				again = append(again, tp)
			}
		}
	}
	return again
}

// WriteLocal writes one marker to each of this broker's partitions in tps
// (WriteTxnMarkers' work on the partition leader) and calls done with a
// code per partition once every one has answered: NONE once the ISR has
// the marker. It never blocks; done runs on some other goroutine.
func WriteLocal(e *env.Env, pid int64, epoch int16, commit bool, coordinatorEpoch int32, tps []TopicPartition, done func([]kerr.Code)) {
	codes := make([]kerr.Code, len(tps))
	outs := make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(tps))
	routes := e.Routes.Load()
	g := gather.New(len(tps), e.GatherTimeout, func(_ []int64, timedOut bool) {
		// After a timeout a late partition may still write its out: it is
		// not read, and the marker is sent again (a repeat is harmless).
		for i := range outs {
			switch {
			case codes[i] != kerr.None:
			case timedOut:
				codes[i] = kerr.RequestTimedOut
			default:
				codes[i] = kerr.Code(outs[i].ErrorCode)
			}
		}
		done(codes)
	})
	for i, tp := range tps {
		pa, code := routes.Lookup(tp.Topic, tp.Partition)
		if code != kerr.None {
			codes[i] = code
			g.Put(i, 0)
			continue
		}
		outs[i].Partition = tp.Partition
		e.Send(pa, &partition.WriteMarker{ProducerID: pid, ProducerEpoch: epoch, Commit: commit,
			CoordinatorEpoch: coordinatorEpoch, Out: &outs[i], Reply: gather.Slot{G: g, I: i}})
	}
}
