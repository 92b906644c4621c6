package main

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
)

// withConsumerGroups fills in the views of KIP-848 consumer groups.
// DescribeGroups (what kadm's Lag uses) knows classic groups only and
// answers a consumer group as Dead with no members, as Kafka 4 does; for
// those, ConsumerGroupDescribe gives the state, the assignor and the
// members with their assignments. A broker without ConsumerGroupDescribe
// leaves the views as they are.
func withConsumerGroups(ctx context.Context, adm *kadm.Client, views []groupView) {
	var dead []string
	for _, v := range views {
		if v.State == "Dead" && len(v.Members) == 0 {
			dead = append(dead, v.Group)
		}
	}
	if len(dead) == 0 {
		return
	}
	described, err := adm.DescribeConsumerGroups(ctx, dead...)
	if err != nil && len(described) == 0 {
		return
	}
	for i := range views {
		d, ok := described[views[i].Group]
		if !ok || d.Err != nil {
			continue
		}
		views[i].State, views[i].ProtocolType, views[i].Protocol, views[i].Error = d.State, "consumer", d.AssignorName, ""
		owner := map[string]map[int32]string{}
		for _, m := range d.Members {
			mv := groupMemberView{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assignment: []topicPartitionsView{}}
			if m.InstanceID != nil {
				mv.InstanceID = *m.InstanceID
			}
			for _, topic := range slices.Sorted(maps.Keys(m.Assignment)) {
				ps := slices.Sorted(maps.Keys(m.Assignment[topic]))
				mv.Assignment = append(mv.Assignment, topicPartitionsView{Topic: topic, Partitions: ps})
				if owner[topic] == nil {
					owner[topic] = map[int32]string{}
				}
				for _, p := range ps {
					owner[topic][p] = m.MemberID
				}
			}
			views[i].Members = append(views[i].Members, mv)
		}
		for j := range views[i].Offsets {
			o := &views[i].Offsets[j]
			o.Member = owner[o.Topic][o.Partition]
		}
	}
}

// consumerGroupActive reports whether group is a KIP-848 consumer group
// with members (and how many), which DescribeGroups does not show.
func consumerGroupActive(ctx context.Context, adm *kadm.Client, group string) (state string, members int) {
	described, err := adm.DescribeConsumerGroups(ctx, group)
	if err != nil {
		return "", 0
	}
	d, ok := described[group]
	if !ok || d.Err != nil || d.State == "Empty" || d.State == "Dead" {
		return "", 0
	}
	return d.State, len(d.Members)
}

// activeGroupError refuses an offset reset of a group with members.
func activeGroupError(group, state string, members int) error {
	return fmt.Errorf("group %s is %s with %d member(s): stop its consumers first (offsets of an active group cannot be reset)",
		group, state, members)
}
