package replica

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/wire/kerr"
)

// alterPartitionVersion is what Kafka 3.9's brokers send: the new ISR
// with each member's broker epoch (KIP-903).
const alterPartitionVersion = 3

// ISRSender sends leaders' ISR proposals to the controller.
type ISRSender struct {
	Me       int32
	Epoch    *atomic.Int64 // this broker's registration epoch
	Client   *interbroker.Client
	View     *cluster.Table
	Listener string
	Log      *slog.Logger
	Timeout  time.Duration
}

// AlterISR is partition.Replication's AlterISR: one AlterPartition, off
// the caller's goroutine; done gets the controller's answer.
func (s *ISRSender) AlterISR(topic string, id [16]byte, p int32, prop partition.ISRProposal, done func(isr []int32, epoch int32, outcome partition.ISROutcome)) {
	go func() {
		isr, epoch, err := s.sendUntilAnswered(topic, id, p, prop)
		var code kerr.Code
		switch {
		case err == nil:
			done(isr, epoch, partition.ISRChanged)
		case errors.As(err, &code) && code != kerr.IneligibleReplica && code != kerr.OperationNotAttempted && code != kerr.InvalidRequest:
			// Not a refusal that says the change was not made: the leader
			// waits for the next LeaderAndIsr.
			s.Log.Warn("ISR change refused; the leader waits for the controller's next word", "topic", topic, "partition", p, "isr", prop.ISR, "err", err)
			done(nil, 0, partition.ISRFenced)
		default:
			s.Log.Warn("ISR change not made; the leader proposes again", "topic", topic, "partition", p, "isr", prop.ISR, "err", err)
			done(nil, 0, partition.ISRRefused)
		}
	}()
}

// resendFor bounds how long a proposal is resent while the controller
// cannot be reached or has moved; past it the leader waits for the
// controller's next LeaderAndIsr, which any controller change sends.
const resendFor = 2 * time.Minute

// sendUntilAnswered sends the proposal until a controller answers it:
// a send that failed on the way, timed out, or reached a broker that is
// no longer the controller may still have been applied, so the leader
// must not take it for refused (its added members would stop counting
// for the high watermark while ZooKeeper already has them in the ISR).
// A resend of an applied change is answered as applied.
func (s *ISRSender) sendUntilAnswered(topic string, id [16]byte, p int32, prop partition.ISRProposal) ([]int32, int32, error) {
	backoff, deadline := 200*time.Millisecond, time.Now().Add(resendFor)
	for {
		isr, epoch, err := s.send(topic, id, p, prop)
		var code kerr.Code
		answered := err == nil || (errors.As(err, &code) && code != kerr.NotController)
		if answered {
			return isr, epoch, err
		}
		if time.Now().After(deadline) {
			return nil, 0, kerr.NotController // never answered: wait for the next LeaderAndIsr
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (s *ISRSender) send(topic string, id [16]byte, p int32, prop partition.ISRProposal) ([]int32, int32, error) {
	addr, ok := s.controllerAddr()
	if !ok {
		return nil, 0, errors.New("no controller known")
	}
	req := kmsg.NewPtrAlterPartitionRequest()
	req.BrokerID, req.BrokerEpoch = s.Me, s.Epoch.Load()
	t := kmsg.NewAlterPartitionRequestTopic()
	t.Topic, t.TopicID = topic, id
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch, rp.NewISR = p, prop.LeaderEpoch, prop.PartitionEpoch, prop.ISR
	for _, b := range prop.ISR {
		rp.NewEpochISR = append(rp.NewEpochISR, kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{BrokerID: b, BrokerEpoch: -1})
	}
	t.Partitions = []kmsg.AlterPartitionRequestTopicPartition{rp}
	req.Topics = []kmsg.AlterPartitionRequestTopic{t}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := s.Client.Send(ctx, addr, interbroker.Pin(req, alterPartitionVersion))
	if err != nil {
		return nil, 0, err
	}
	r := resp.(*kmsg.AlterPartitionResponse)
	if r.ErrorCode != 0 {
		return nil, 0, kerr.Code(r.ErrorCode)
	}
	for _, rt := range r.Topics {
		for _, pr := range rt.Partitions {
			if pr.Partition != p {
				continue
			}
			if pr.ErrorCode != 0 {
				return nil, 0, kerr.Code(pr.ErrorCode)
			}
			return pr.ISR, pr.PartitionEpoch, nil
		}
	}
	return nil, 0, errors.New("the controller's answer names no such partition")
}

func (s *ISRSender) controllerAddr() (string, bool) { return s.View.Load().ControllerAddr(s.Listener) }
