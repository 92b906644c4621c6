package testkit

import "github.com/twmb/franz-go/pkg/kadm"

// ConsumerGroupReconciled reports whether a KIP-848 consumer group, as
// ConsumerGroupDescribe shows it, is Stable with n members that between
// them own all parts partitions of topic: every member has reconciled to
// the target assignment.
func ConsumerGroupReconciled(g kadm.DescribedConsumerGroup, topic string, n, parts int) bool {
	if g.Err != nil || g.State != "Stable" || len(g.Members) != n {
		return false
	}
	owned := 0
	for _, m := range g.Members {
		owned += len(m.Assignment[topic])
	}
	return owned == parts
}
