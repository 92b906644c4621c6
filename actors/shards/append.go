package shards

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Append writes a coordinator's batch to topic/p through the partition's
// produce path (validation, leader epoch, acks=all: fsynced under the
// flush policy and, in a cluster, on the ISR) and hands done the
// partition's code: NONE once durable, NOT_LEADER_OR_FOLLOWER without a
// partition actor here, REQUEST_TIMED_OUT past the gather timeout. done
// runs on some other goroutine (a coordinator's actor sends it to itself
// as a message). Appends of one coordinator reach the partition's mailbox
// in order, so they land in the log in order.
func Append(e *env.Env, topic string, p int32, records []byte, done func(kerr.Code)) {
	AppendFor(e, topic, p, records, "", done)
}

// AppendFor is Append of a transactional batch written for the
// transactional id transactionalID (the group coordinator's
// TxnOffsetCommit): the partition verifies it with the transaction's
// coordinator first when it opens the transaction there (KIP-890, as
// Kafka's group coordinator does). "" is Append.
func AppendFor(e *env.Env, topic string, p int32, records []byte, transactionalID string, done func(kerr.Code)) {
	pid, ok := e.Routes.Load().Partition(topic, p)
	if !ok {
		done(kerr.NotLeaderOrFollower)
		return
	}
	out := &kmsg.ProduceResponseTopicPartition{}
	out.Default()
	out.Partition = p
	g := gather.New(1, e.GatherTimeout, func(_ []int64, timedOut bool) {
		code := kerr.RequestTimedOut
		if !timedOut {
			code = kerr.Code(out.ErrorCode)
		}
		done(code)
	})
	e.Send(pid, &partition.ProduceRequest{
		Records: records, Version: 9, Acks: -1, Coordinator: true, TransactionalID: transactionalID, Out: out, Reply: gather.Slot{G: g},
	})
}
