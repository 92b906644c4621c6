package metadata

import (
	"errors"
	"slices"
	"syscall"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

// DeleteTopics handles a DeleteTopics request (v1-6; by name, and by topic
// id from v6). Deleted topics leave the persisted state at once; their
// names stay reserved until the shell reports, through FinishDeletion,
// that their files are gone, so a new topic of the same name never meets
// the old one's files.
func (s *State) DeleteTopics(req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, Effects) {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type ask struct {
		name  *string
		id    TopicID
		byID  bool
		valid bool
	}
	var asks []ask
	if req.Version >= 6 {
		for _, t := range req.Topics {
			switch {
			case t.Topic != nil && !TopicID(t.TopicID).IsZero():
				asks = append(asks, ask{name: t.Topic, id: t.TopicID})
			case t.Topic != nil:
				asks = append(asks, ask{name: t.Topic, valid: true})
			default:
				asks = append(asks, ask{id: t.TopicID, byID: true, valid: true})
			}
		}
	} else {
		for _, n := range req.TopicNames {
			asks = append(asks, ask{name: str(n), valid: true})
		}
	}
	enabled := config.ParseBool(s.brokerValue(config.KeyDeleteTopicEnable))
	next := s.snap.clone()
	doomed := make(map[TopicID]bool)
	var deletedAt []int
	for _, a := range asks {
		out := kmsg.NewDeleteTopicsResponseTopic()
		out.Topic, out.TopicID = a.name, a.id
		var t *Topic
		switch {
		case !a.valid:
			out.ErrorCode, out.ErrorMessage = kerr.InvalidRequest.Int16(), str("Give a topic name or a topic id, not both.")
		case !enabled:
			out.ErrorCode, out.ErrorMessage = kerr.TopicDeletionDisabled.Int16(), str("Topic deletion is disabled (delete.topic.enable=false).")
		case a.byID:
			if t = s.byID[a.id]; t == nil {
				out.ErrorCode, out.ErrorMessage = kerr.UnknownTopicID.Int16(), str("This broker has no topic with that id.")
			}
		default:
			if t = s.byName[*a.name]; t == nil {
				out.ErrorCode, out.ErrorMessage = kerr.UnknownTopicOrPartition.Int16(), str("This broker has no topic '"+*a.name+"'.")
			}
		}
		if t != nil {
			out.Topic, out.TopicID = str(t.Name), t.ID
			if !doomed[t.ID] {
				doomed[t.ID] = true
				deletedAt = append(deletedAt, len(resp.Topics))
			}
		}
		resp.Topics = append(resp.Topics, out)
	}
	if len(doomed) == 0 {
		return resp, Effects{}
	}
	kept := next.Topics[:0]
	var gone []Topic
	for _, t := range next.Topics {
		if doomed[t.ID] {
			gone = append(gone, t)
			continue
		}
		kept = append(kept, t)
	}
	next.Topics = kept
	next.Deleting = append(next.Deleting, gone...)
	if err := s.commit(next); err != nil {
		for _, i := range deletedAt {
			resp.Topics[i].ErrorCode = kerr.KafkaStorageError.Int16()
			resp.Topics[i].ErrorMessage = str("Could not persist the deletion: " + err.Error())
		}
		var eff Effects
		if errors.Is(err, syscall.ENOSPC) {
			// A full disk must not keep an operator from freeing it
			// through the broker: the shell removes the doomed topics'
			// files first, then asks again, and the save then has room.
			for _, t := range gone {
				eff.FreeSpace = append(eff.FreeSpace, refs(t)...)
			}
		}
		return resp, eff
	}
	var eff Effects
	for _, t := range gone {
		eff.Delete = append(eff.Delete, refs(t)...)
	}
	return resp, eff
}

// FinishDeletion releases a deleted topic's name once its files are gone,
// and persists that. On a save error the name stays reserved (and the
// removal is retried on the next start).
func (s *State) FinishDeletion(name string, id TopicID) error {
	if s.deleting[name] != id {
		return nil
	}
	next := s.snap.clone()
	next.Deleting = slices.DeleteFunc(next.Deleting, func(t Topic) bool { return t.ID == id })
	return s.commit(next)
}

// Deleting reports whether a topic name is waiting for its files to go.
func (s *State) Deleting(name string) bool {
	_, ok := s.deleting[name]
	return ok
}
