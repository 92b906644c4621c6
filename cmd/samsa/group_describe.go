package main

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newGroupDescribeCommand(opts *adminOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "describe GROUP...",
		Short: "Show a group's state, members, assignments and lag per partition",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, groups []string) error {
			s, err := opts.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			// Lag is DescribeGroups + OffsetFetch + ListOffsets (start and
			// end) of every committed or assigned partition.
			lags, err := s.adm.Lag(s.ctx, groups...)
			if err != nil && len(lags) == 0 {
				return opts.requestError("describe groups", err)
			}
			views := make([]groupView, 0, len(groups))
			for _, g := range groups {
				l, ok := lags[g]
				if !ok {
					views = append(views, groupView{Group: g, Error: "no answer for this group"})
					continue
				}
				views = append(views, viewGroup(l))
			}
			withConsumerGroups(s.ctx, s.adm, views)
			return writeGroupDescriptions(cmd.OutOrStdout(), s.format, views)
		},
	}
}

// viewGroup turns kadm's answer into the rendered view.
func viewGroup(l kadm.DescribedGroupLag) groupView {
	v := groupView{Group: l.Group, State: l.State, ProtocolType: l.ProtocolType, Protocol: l.Protocol,
		Coordinator: l.Coordinator.NodeID, Members: []groupMemberView{}, Offsets: []groupOffsetView{}}
	if err := l.Error(); err != nil {
		v.Error = kafkaErrorText(err, "")
	}
	owner := map[string]map[int32]string{}
	for _, m := range l.Members {
		mv := groupMemberView{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assignment: []topicPartitionsView{}}
		if m.InstanceID != nil {
			mv.InstanceID = *m.InstanceID
		}
		if ca, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range ca.Topics {
				ps := append([]int32(nil), t.Partitions...)
				sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
				mv.Assignment = append(mv.Assignment, topicPartitionsView{Topic: t.Topic, Partitions: ps})
				if owner[t.Topic] == nil {
					owner[t.Topic] = map[int32]string{}
				}
				for _, p := range ps {
					owner[t.Topic][p] = m.MemberID
				}
			}
			sort.Slice(mv.Assignment, func(i, j int) bool { return mv.Assignment[i].Topic < mv.Assignment[j].Topic })
		}
		v.Members = append(v.Members, mv)
	}
	for _, ml := range l.Lag.Sorted() {
		pv := groupOffsetView{Topic: ml.Topic, Partition: ml.Partition, Committed: -1, End: ml.End.Offset, Lag: ml.Lag,
			Member: owner[ml.Topic][ml.Partition]}
		if ml.Commit.At >= 0 && ml.Commit.Topic != "" {
			pv.Committed = ml.Commit.At
			pv.Metadata = ml.Commit.Metadata
		}
		if ml.Err != nil {
			pv.Error = kafkaErrorText(ml.Err, "")
		}
		v.Offsets = append(v.Offsets, pv)
		if ml.Lag > 0 {
			v.TotalLag += ml.Lag
		}
	}
	sort.Slice(v.Offsets, func(i, j int) bool {
		a, b := v.Offsets[i], v.Offsets[j]
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c < 0
		}
		return a.Partition < b.Partition
	})
	return v
}
