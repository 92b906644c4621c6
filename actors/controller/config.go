package controller

import "time"

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
	// UncleanFor, if set, is unclean.leader.election.enable as it holds
	// now for one topic (its topic config, else the broker's); nil:
	// UncleanLeaderElection for every topic.
	UncleanFor func(topic string) bool
	// AutoLeaderRebalance is auto.leader.rebalance.enable: the shell calls
	// CheckLeaderBalance every LeaderImbalanceCheckInterval
	// (leader.imbalance.check.interval.seconds), which moves leadership
	// back to the preferred replicas of a broker whose share of
	// partitions led elsewhere is above LeaderImbalancePerBrokerPercentage
	// (leader.imbalance.per.broker.percentage).
	AutoLeaderRebalance                bool
	LeaderImbalanceCheckInterval       time.Duration
	LeaderImbalancePerBrokerPercentage int
	// DeleteTopicEnable is delete.topic.enable: when false a deletion
	// request only has its marker removed.
	DeleteTopicEnable bool
	// InterBrokerListener names the listener whose host and port
	// LeaderAndIsr's live leaders carry (inter.broker.listener.name);
	// "" takes each broker's first endpoint.
	InterBrokerListener string
}
