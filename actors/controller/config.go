package controller

// Config is what the core needs to know about itself and the cluster's
// settings. Epoch and EpochZkVersion come from winning the election
// (/controller_epoch's value and znode version); every request carries
// the first, every fenced write checks the second.
type Config struct {
	BrokerID       int32
	Epoch          int32
	EpochZkVersion int32
	// UncleanLeaderElection is unclean.leader.election.enable: a partition
	// with no live in-sync replica may elect any live replica (and is then
	// RECOVERING), losing what only the dead ISR had.
	UncleanLeaderElection bool
	// DeleteTopicEnable is delete.topic.enable: when false a deletion
	// request only has its marker removed.
	DeleteTopicEnable bool
	// InterBrokerListener names the listener whose host and port
	// LeaderAndIsr's live leaders carry (inter.broker.listener.name);
	// "" takes each broker's first endpoint.
	InterBrokerListener string
}
