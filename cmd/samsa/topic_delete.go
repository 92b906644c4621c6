package main

import (
	"sort"

	"github.com/spf13/cobra"
)

func newTopicDeleteCommand(opts *adminOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete TOPIC...",
		Short: "Delete topics and all their data",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, topics []string) error {
			s, err := opts.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			resps, err := s.adm.DeleteTopics(s.ctx, topics...)
			if err != nil {
				return opts.requestError("delete topics", err)
			}
			results := make([]topicResult, 0, len(resps))
			for _, r := range resps {
				res := topicResult{Topic: r.Topic, Outcome: "deleted"}
				if r.Err != nil {
					res.Outcome = ""
					res.setError(r.Err, r.ErrMessage)
				}
				results = append(results, res)
			}
			sort.Slice(results, func(i, j int) bool { return results[i].Topic < results[j].Topic })
			if err := writeResults(cmd.OutOrStdout(), s.format, results); err != nil {
				return err
			}
			return failedResults("delete", results)
		},
	}
}
