package sharegroup

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// ackBatch is one acknowledgement batch of ShareFetch or ShareAcknowledge.
type ackBatch struct {
	first, last int64
	types       []int8
}

// acknowledge applies a member's acknowledgement batches to one share
// partition. A batch that does not match the records' state is
// INVALID_RECORD_STATE and applies nothing; the others still apply, as
// in Kafka.
func (a *coordinatorActor) acknowledge(group, member string, tp TopicPartition, batches []ackBatch, now time.Time, touched map[partKey]bool) kerr.Code {
	k := partKey{group, tp}
	if code := a.servable(group, tp); code != kerr.None {
		return code
	}
	p := a.parts[k]
	if p == nil {
		if _, _, code := a.resolve(tp); code != kerr.None {
			return code
		}
		return kerr.InvalidRecordState
	}
	code := kerr.None
	// Waiting fetches of the group can acquire more only if records come
	// back (a release) or the start moves off a full in-flight window.
	full := a.cfg.Limits.MaxInFlight > 0 && p.End()-p.Start() >= a.cfg.Limits.MaxInFlight
	freed := false
	for _, b := range batches {
		types := make([]AckType, len(b.types))
		for i, t := range b.types {
			types[i] = AckType(t)
			freed = freed || types[i] == AckRelease
		}
		if !p.Acknowledge(member, b.first, b.last, types, now) {
			code = kerr.InvalidRecordState
			continue
		}
		touched[k] = true
	}
	if touched[k] && (freed || full) {
		a.wakeGroup(group)
	}
	return code
}

// shareAcknowledge serves ShareAcknowledge: acknowledgements outside a
// fetch, under the member's share session.
func (a *coordinatorActor) shareAcknowledge(c *Call, r *kmsg.ShareAcknowledgeRequest) {
	resp := r.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	resp.Version = r.Version
	group, member := deref(r.GroupID), deref(r.MemberID)
	sess, code := a.useSession(group, member, r.ShareSessionEpoch, nil, nil, false)
	if code != kerr.None {
		replyError(c, code)
		return
	}
	now, touched := a.now(), map[partKey]bool{}
	for _, t := range r.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			batches := make([]ackBatch, len(p.AcknowledgementBatches))
			for i, b := range p.AcknowledgementBatches {
				batches[i] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
			}
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = int16(a.acknowledge(group, member, TopicPartition{t.TopicID, p.Partition}, batches, now, touched))
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if sess == nil {
		a.releaseMember(group, member) // the final epoch closed the session
	}
	a.reply(c, resp, touched)
}

// useSession checks the member and applies the request's share session
// epoch; a member the group does not know is UNKNOWN_MEMBER_ID.
func (a *coordinatorActor) useSession(group, member string, epoch int32, add, forget []TopicPartition, fetch bool) (*Session, kerr.Code) {
	// In cluster mode membership lives on the group's coordinator,
	// usually another broker: a leader takes the member the session
	// names (its locks expire, and an idle session is closed).
	if g := a.groups[group]; a.cl == nil && (g == nil || g.Members[member] == nil) {
		return nil, kerr.UnknownMemberID
	}
	return a.sessions.Use(group, member, epoch, add, forget, fetch)
}
