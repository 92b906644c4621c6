package main

import (
	"github.com/spf13/cobra"
)

func newTopicListCommand(opts *adminOptions) *cobra.Command {
	var internal bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics with their partition count and replication factor",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := opts.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			list := s.adm.ListTopics
			if internal {
				list = s.adm.ListTopicsWithInternal
			}
			details, err := list(s.ctx)
			if err != nil {
				return opts.requestError("list topics", err)
			}
			rows := make([]topicSummary, 0, len(details))
			for _, d := range details.Sorted() {
				rows = append(rows, summarizeTopic(d))
			}
			return writeTopicList(cmd.OutOrStdout(), s.format, rows)
		},
	}
	cmd.Flags().BoolVar(&internal, "internal", false, "include internal topics (__consumer_offsets, ...)")
	return cmd
}
