package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// handleOffsetForLeaderEpoch answers OffsetForLeaderEpoch v2-4 from each
// partition's leader epoch cache: for a requested epoch, the largest
// epoch the log knows at or below it and the offset where the next epoch
// began (the log end offset for the latest); -1/-1 when the log knows no
// such epoch. Consumers use it to detect truncation after a leader change
// (librdkafka 2.1+ sends v2 whenever it has a position's epoch).
func handleOffsetForLeaderEpoch(b *Broker, req *wire.Request) {
	body := req.Body.(*kmsg.OffsetForLeaderEpochRequest)
	resp := body.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	routes := b.Routes()
	var tasks partitionTasks
	resp.Topics = make([]kmsg.OffsetForLeaderEpochResponseTopic, len(body.Topics))
	for i := range body.Topics {
		rt := &body.Topics[i]
		st := &resp.Topics[i]
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.OffsetForLeaderEpochResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp, sp := &rt.Partitions[j], &st.Partitions[j]
			sp.Default()
			sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
			pid, code := lookupPartition(routes, rt.Topic, rp.Partition)
			if code != kerr.None {
				sp.ErrorCode = int16(code)
				continue
			}
			tasks.add(pid, func(p *partitionActor) { p.endOffsetForEpoch(rp.CurrentLeaderEpoch, rp.LeaderEpoch, sp) })
		}
	}
	tasks.start(b, func(timedOut bool) {
		if timedOut {
			resp = body.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
			for _, rt := range body.Topics {
				st := kmsg.NewOffsetForLeaderEpochResponseTopic()
				st.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
					sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
					sp.ErrorCode = int16(kerr.RequestTimedOut)
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
		}
		reply(req, resp)
	})
}

// endOffsetForEpoch answers one partition of OffsetForLeaderEpoch.
func (p *partitionActor) endOffsetForEpoch(currentEpoch, epoch int32, out *kmsg.OffsetForLeaderEpochResponseTopicPartition) {
	if p.plog == nil {
		out.ErrorCode = int16(kerr.NotLeaderOrFollower)
		return
	}
	if code := checkLeaderEpoch(currentEpoch, p.spec.LeaderEpoch); code != kerr.None {
		out.ErrorCode = int16(code)
		return
	}
	out.LeaderEpoch, out.EndOffset = p.plog.EndOffsetForEpoch(epoch)
}
