package sharegroup

import (
	"github.com/samsa-io/samsa/wire/kerr"
)

// DeleteGroups asks the share coordinator to delete the share groups
// among IDs (DeleteGroups, which Admin.deleteShareGroups and
// kafka-share-groups.sh --delete send). Reply, on any goroutine, has a
// code for each id that names a share group here: NONE once it is
// deleted and its state tombstoned, NON_EMPTY_GROUP with members, or an
// error; ids not in it are not share groups here (the group coordinators
// answer them).
type DeleteGroups struct {
	IDs   []string
	Reply func(map[string]kerr.Code)
}

// DeleteGroups sends d to the coordinator; without one no id is a share
// group.
func (s *Service) DeleteGroups(d *DeleteGroups) {
	if s == nil {
		d.Reply(map[string]kerr.Code{})
		return
	}
	s.env.Send(s.pid, d)
}

// deleteGroups deletes the empty share groups of d.IDs this broker
// coordinates: the group, and every share partition's state (tombstones
// in the state topic; in cluster mode for every partition of the topics
// its members subscribed to, since the share partitions are on their
// leaders).
func (a *coordinatorActor) deleteGroups(d *DeleteGroups) {
	codes := map[string]kerr.Code{}
	touched := map[partKey]bool{}
	var deleted []string
	for _, id := range d.IDs {
		if _, seen := codes[id]; seen || !a.isShareGroup(id) || a.coordinates(id) != kerr.None {
			continue
		}
		if g := a.groups[id]; g != nil && len(g.Members) > 0 {
			codes[id] = kerr.NonEmptyGroup
			continue
		}
		codes[id] = kerr.None
		deleted = append(deleted, id)
		for k := range a.parts {
			if k.group == id {
				delete(a.parts, k)
				touched[k] = true
			}
		}
		for k := range a.restored {
			if k.group == id {
				delete(a.restored, k)
				touched[k] = true
			}
		}
		if a.cl != nil {
			for _, name := range a.subscribedTopics(id) {
				tid, n := a.topicShape(name)
				for p := range max(n, 0) {
					touched[partKey{id, TopicPartition{tid, int32(p)}}] = true
				}
			}
		}
	}
	for _, id := range deleted {
		delete(a.groups, id)
		delete(a.settings, id)
		if a.cl != nil {
			delete(a.cl.subscribed, id)
		}
	}
	done := func(code kerr.Code) {
		if code != kerr.None {
			for _, id := range deleted {
				codes[id] = code
			}
		}
		d.Reply(codes)
	}
	a.persist(touched, done)
}

// isShareGroup reports whether id is a share group here: it has members
// or had them, or (alone, after a restart) share partitions.
func (a *coordinatorActor) isShareGroup(id string) bool {
	if a.groups[id] != nil {
		return true
	}
	for k := range a.parts {
		if k.group == id {
			return true
		}
	}
	for k := range a.restored {
		if k.group == id {
			return true
		}
	}
	return false
}
