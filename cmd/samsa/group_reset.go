package main

import (
	"errors"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// resetPlan says where reset-offsets moves a group's offsets.
type resetPlan struct {
	toEarliest, toLatest bool
	toOffset             int64 // -1: unset
	shiftBy              int64
	shift                bool
}

func (p resetPlan) validate() error {
	n := 0
	for _, set := range []bool{p.toEarliest, p.toLatest, p.toOffset >= 0, p.shift} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("give exactly one of --to-earliest, --to-latest, --to-offset, --shift-by")
	}
	return nil
}

// target is the new offset of one partition, clamped to [start, end] as
// Kafka's tool does.
func (p resetPlan) target(current, start, end int64) int64 {
	var t int64
	switch {
	case p.toEarliest:
		t = start
	case p.toLatest:
		t = end
	case p.toOffset >= 0:
		t = p.toOffset
	case p.shift:
		if current < 0 {
			current = start
		}
		t = current + p.shiftBy
	}
	return max(start, min(t, end))
}

func newGroupResetOffsetsCommand(opts *adminOptions) *cobra.Command {
	plan := resetPlan{toOffset: -1}
	var topics []string
	var execute bool
	cmd := &cobra.Command{
		Use:   "reset-offsets GROUP",
		Short: "Move a group's committed offsets (a dry run unless --execute)",
		Long: `Move the committed offsets of an inactive group: to the earliest or latest
offset, to a given offset, or shifted by N, for the topics given with --topic
(default: every topic the group has committed offsets for). Targets are clamped
to each partition's log start and end. Without --execute nothing changes and
the plan is printed, as Kafka's kafka-consumer-groups does.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := plan.validate(); err != nil {
				return err
			}
			group := args[0]
			s, err := opts.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			described, err := s.adm.DescribeGroups(s.ctx, group)
			if err != nil {
				return opts.requestError("describe group", err)
			}
			if d := described[group]; d.Err == nil && d.State != "Empty" && d.State != "Dead" && d.State != "" {
				return activeGroupError(group, d.State, len(d.Members))
			}
			if state, n := consumerGroupActive(s.ctx, s.adm, group); n > 0 {
				return activeGroupError(group, state, n)
			}
			current, err := s.adm.FetchOffsets(s.ctx, group)
			if err != nil {
				return opts.requestError("fetch offsets", err)
			}
			if len(topics) == 0 {
				for t := range current.Offsets().TopicsSet() {
					topics = append(topics, t)
				}
				sort.Strings(topics)
			}
			if len(topics) == 0 {
				return fmt.Errorf("group %s has no committed offsets; name the topics with --topic", group)
			}
			starts, err := s.adm.ListStartOffsets(s.ctx, topics...)
			if err != nil {
				return opts.requestError("list start offsets", err)
			}
			ends, err := s.adm.ListEndOffsets(s.ctx, topics...)
			if err != nil {
				return opts.requestError("list end offsets", err)
			}
			var rows []resetRow
			next := kadm.Offsets{}
			ends.Each(func(e kadm.ListedOffset) {
				row := resetRow{Topic: e.Topic, Partition: e.Partition, Current: -1}
				if c, ok := current.Lookup(e.Topic, e.Partition); ok && c.Err == nil {
					row.Current = c.At
				}
				st, _ := starts.Lookup(e.Topic, e.Partition)
				if e.Err != nil || st.Err != nil {
					row.Error = kafkaErrorText(errors.Join(e.Err, st.Err), "")
					rows = append(rows, row)
					return
				}
				row.New = plan.target(row.Current, st.Offset, e.Offset)
				next.Add(kadm.Offset{Topic: e.Topic, Partition: e.Partition, At: row.New, LeaderEpoch: -1})
				rows = append(rows, row)
			})
			sort.Slice(rows, func(i, j int) bool {
				if rows[i].Topic != rows[j].Topic {
					return rows[i].Topic < rows[j].Topic
				}
				return rows[i].Partition < rows[j].Partition
			})
			if execute && len(next) > 0 {
				resp, err := s.adm.CommitOffsets(s.ctx, group, next)
				if err != nil {
					return opts.requestError("commit offsets", err)
				}
				for i := range rows {
					if r, ok := resp.Lookup(rows[i].Topic, rows[i].Partition); ok && r.Err != nil {
						rows[i].Error = kafkaErrorText(r.Err, "")
					}
				}
			}
			return writeResetPlan(cmd.OutOrStdout(), s.format, group, execute, rows)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&topics, "topic", nil, "topics to reset (default: every topic with a committed offset)")
	f.BoolVar(&plan.toEarliest, "to-earliest", false, "reset to each partition's log start offset")
	f.BoolVar(&plan.toLatest, "to-latest", false, "reset to each partition's log end offset")
	f.Int64Var(&plan.toOffset, "to-offset", -1, "reset to this offset")
	f.Int64Var(&plan.shiftBy, "shift-by", 0, "move the committed offset by N (negative: back)")
	f.BoolVar(&execute, "execute", false, "commit the new offsets (default: only show them)")
	cmd.PreRun = func(cmd *cobra.Command, _ []string) { plan.shift = cmd.Flags().Changed("shift-by") }
	return cmd
}
