package controller

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Store is what the shell needs of ZooKeeper: the methods of
// zkmeta.Client it calls, in the core's types (the wiring adapts
// zkmeta.Client to it, converting field for field). Watches are one-shot
// channels closed on a change or on the session's loss.
type Store interface {
	// ElectController is the election multi (create /controller, bump
	// /controller_epoch at its version); won is false if another broker
	// was faster.
	ElectController(brokerID int32, now time.Time) (won bool, epoch, epochZkVersion int32, err error)
	ResignController(epochZkVersion int32) error
	WatchController() (controllerID int32, exists bool, changed <-chan struct{}, err error)

	Brokers() (map[int32]BrokerInfo, error)
	WatchBrokerIDs() (ids []int32, changed <-chan struct{}, err error)
	WatchTopics() (names []string, changed <-chan struct{}, err error)
	WatchAssignment(topic string) (TopicAssignment, <-chan struct{}, error)
	PartitionStates(topic string) (map[int32]PartitionState, error)
	WatchDeleteTopics() (names []string, changed <-chan struct{}, err error)

	// Fenced writes: each checks /controller_epoch's version.
	WritePartitionStates(epochZkVersion int32, ws []StateWrite) (newVersions []int32, err error)
	DeleteTopic(epochZkVersion int32, topic string) error
	RemoveDeletionMarker(epochZkVersion int32, topic string) error

	AllocateProducerIDBlock(broker int32, size int64) (ProducerIDBlock, error)

	// EnsureFeatures creates /feature, enabled with no features, when it
	// is missing or disabled: what a Kafka 3.9 controller does on every
	// election (enableFeatureVersioning), so the znode is there as Kafka
	// tools and brokers expect.
	EnsureFeatures() error
}

// Sender is the controller's channel to the brokers (interbroker.Channel):
// one in-order queue per broker, retried until the broker is removed.
// onResponse is called once, from any goroutine, unless the broker was
// removed first.
type Sender interface {
	AddBroker(id int32, addr string)
	RemoveBroker(id int32)
	Enqueue(id int32, req kmsg.Request, onResponse func(kmsg.Response, error))
}

// Errors a Store reports, for Classify's default: an adapter may wrap
// zkmeta's errors in these, or set ShellConfig.Classify instead.
var (
	// ErrControllerMoved: the fencing check on /controller_epoch failed.
	ErrControllerMoved = errors.New("controller: controller epoch moved")
	// ErrConflict: a znode's version or existence was not as expected.
	ErrConflict = errors.New("controller: znode version conflict")
	// ErrNoNode: a znode is missing (a marker already gone is fine).
	ErrNoNode = errors.New("controller: no such znode")
)

func defaultClassify(err error) WriteError {
	switch {
	case errors.Is(err, ErrControllerMoved):
		return WriteFenced
	case errors.Is(err, ErrConflict), errors.Is(err, ErrNoNode):
		return WriteConflict
	}
	return WriteOther
}

// ReassignStore is what partition reassignment needs of ZooKeeper beyond
// Store (the wiring's Store implements both). A Store without it can
// start no reassignment: its writes fail and the controller resigns.
type ReassignStore interface {
	// WriteStatesAndAssignments is WritePartitionStates with topic znode
	// rewrites (any version) in the same fenced multi.
	WriteStatesAndAssignments(epochZkVersion int32, ws []StateWrite, as []TopicAssignment) (newVersions []int32, err error)
	// WatchReassignPartitions reads /admin/reassign_partitions and arms
	// a one-shot watch on it; czxid tells one creation from the next.
	WatchReassignPartitions() (parts map[TopicPartition][]int32, czxid int64, exists bool, changed <-chan struct{}, err error)
	// SetReassignPartitions rewrites the znode, fenced; empty deletes it.
	SetReassignPartitions(epochZkVersion int32, parts map[TopicPartition][]int32) error
}

// errNoReassignStore is the write error of a Store that cannot reassign.
var errNoReassignStore = errors.New("controller: the store cannot write reassignments")
