package main

import (
	"sort"

	"github.com/spf13/cobra"
)

// newGroupCommand groups the consumer group admin subcommands. Like the
// topic commands they speak the Kafka protocol through kadm, so they work
// against Apache Kafka as well as samsa.
func newGroupCommand() *cobra.Command {
	opts := &adminOptions{}
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List, describe, delete consumer groups and reset their offsets",
		Long: `List, describe and delete consumer groups and reset their committed offsets on
any Kafka-compatible cluster (samsa or Apache Kafka). describe shows members,
their assignments and the lag of every committed partition. Output is a table,
or JSON with --output json.`,
	}
	addAdminFlags(cmd, opts)
	cmd.AddCommand(
		newGroupListCommand(opts),
		newGroupDescribeCommand(opts),
		newGroupDeleteCommand(opts),
		newGroupResetOffsetsCommand(opts),
	)
	return cmd
}

func newGroupListCommand(opts *adminOptions) *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List consumer groups with their state and protocol type",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := opts.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			listed, err := s.adm.ListGroups(s.ctx, states...)
			if err != nil {
				return opts.requestError("list groups", err)
			}
			rows := make([]groupSummary, 0, len(listed))
			for _, g := range listed {
				rows = append(rows, groupSummary{Group: g.Group, State: g.State, ProtocolType: g.ProtocolType, Coordinator: g.Coordinator})
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i].Group < rows[j].Group })
			return writeGroupList(cmd.OutOrStdout(), s.format, rows)
		},
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only groups in these states (Empty, Stable, PreparingRebalance, CompletingRebalance, Dead)")
	return cmd
}

func newGroupDeleteCommand(opts *adminOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete GROUP...",
		Short: "Delete empty consumer groups and their committed offsets",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, groups []string) error {
			s, err := opts.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			resp, err := s.adm.DeleteGroups(s.ctx, groups...)
			if err != nil {
				return opts.requestError("delete groups", err)
			}
			rows := make([]groupResult, 0, len(groups))
			failed := false
			for _, g := range groups {
				r := groupResult{Group: g, Outcome: "deleted"}
				if d, ok := resp[g]; ok && d.Err != nil {
					r.Outcome = ""
					r.Error, r.ErrorCode, r.Message = splitKafkaError(d.Err, "")
					failed = true
				}
				rows = append(rows, r)
			}
			if err := writeGroupResults(cmd.OutOrStdout(), s.format, rows); err != nil {
				return err
			}
			if failed {
				return errSomeFailed
			}
			return nil
		},
	}
}
