package controller

import "github.com/twmb/franz-go/pkg/kmsg"

// Effects is what the shell must do after a call into the core, in this
// order:
//
//  1. Writes, DeleteTopics and RemoveMarkers to ZooKeeper, each fenced by
//     Config.EpochZkVersion. Writes go as one multi, all or nothing, in
//     order (a partition may appear twice: the second write expects the
//     version the first leaves). Then report the outcome: Written with
//     the new versions, or WriteFailed. Nothing below may happen before
//     the writes succeed, since the requests announce what they wrote.
//  2. Send, in order: requests to one broker must reach it in the order
//     given (LeaderAndIsr before the UpdateMetadata that follows it).
//  3. Reply, if set, answers the request the call was about
//     (AlterPartition, ControlledShutdown).
//  4. Resign: step down (delete /controller if still ours) and campaign
//     again; drop this core.
//  5. Reload: the core's cache was found stale (a write conflicted):
//     read everything again and call Start with it.
type Effects struct {
	Writes []StateWrite
	// Assignments are topic znode writes (/brokers/topics/<t>, any
	// version, fenced), in the same multi as Writes: a reassignment's
	// replica set changes with the states it goes with.
	Assignments []TopicAssignment
	// ReassignZnode, when set, rewrites /admin/reassign_partitions with
	// what is left of it (fenced, after the writes above); empty deletes
	// it.
	ReassignZnode *ReassignZnode
	DeleteTopics  []string // zkmeta.DeleteTopic: assignment, config, marker
	RemoveMarkers []string // zkmeta.RemoveDeletionMarker
	Send          []Send
	Reply         kmsg.Response
	Resign        bool
	Reload        bool
}

// Send is one controller request for one broker.
type Send struct {
	Broker int32
	Req    kmsg.Request
}

// WriteError classifies why the shell's fenced write failed.
type WriteError uint8

const (
	// WriteFenced: /controller_epoch moved (zkmeta.ErrControllerMoved):
	// another controller was elected.
	WriteFenced WriteError = iota + 1
	// WriteConflict: a partition's version or existence was not what the
	// core expected (zkmeta.ErrBadVersion, ErrNodeExists, ErrNoNode).
	WriteConflict
	// WriteOther: anything else (a lost connection, an expired session).
	WriteOther
)
