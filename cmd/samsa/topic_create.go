package main

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"
)

func newTopicCreateCommand(opts *adminOptions) *cobra.Command {
	var (
		partitions   int32
		replication  int16
		configs      []string
		validateOnly bool
	)
	cmd := &cobra.Command{
		Use:   "create TOPIC...",
		Short: "Create topics",
		Example: `  samsa topic create orders --partitions 6 --config retention.ms=86400000
  samsa topic create a b c --replication-factor 3 --validate-only`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, topics []string) error {
			kvs, err := parseKeyValues("config", configs)
			if err != nil {
				return err
			}
			cfg := configMap(kvs)
			s, err := opts.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			create := s.adm.CreateTopics
			if validateOnly {
				create = s.adm.ValidateCreateTopics
			}
			resps, err := create(s.ctx, partitions, replication, cfg, topics...)
			if err != nil {
				return opts.requestError("create topics", err)
			}
			results := make([]topicResult, 0, len(resps))
			for _, r := range resps {
				res := topicResult{Topic: r.Topic}
				if r.Err != nil {
					res.setError(r.Err, r.ErrMessage)
				} else {
					res.Partitions, res.ReplicationFactor = r.NumPartitions, r.ReplicationFactor
					res.Outcome = "created"
					if validateOnly {
						res.Outcome = "valid (not created: --validate-only)"
					}
				}
				results = append(results, res)
			}
			sort.Slice(results, func(i, j int) bool { return results[i].Topic < results[j].Topic })
			if err := writeResults(cmd.OutOrStdout(), s.format, results); err != nil {
				return err
			}
			return failedResults("create", results)
		},
	}
	f := cmd.Flags()
	f.Int32VarP(&partitions, "partitions", "p", -1, "number of partitions (-1: the broker's num.partitions)")
	f.Int16VarP(&replication, "replication-factor", "r", -1,
		"replicas per partition (-1: the broker's default.replication.factor)")
	f.StringArrayVarP(&configs, "config", "c", nil, "topic config key=value (repeatable)")
	f.BoolVar(&validateOnly, "validate-only", false, "ask the broker to check the request without creating anything")
	return cmd
}

// failedResults turns the failed rows of a batch into one error, so the
// command exits non-zero after printing every row.
func failedResults(verb string, results []topicResult) error {
	var failed int
	var first string
	for _, r := range results {
		if r.Error != "" {
			if failed == 0 {
				first = fmt.Sprintf("%s: %s", r.Topic, r.errorText())
			}
			failed++
		}
	}
	switch failed {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s %s", verb, first)
	default:
		return fmt.Errorf("%s failed for %d topics; first: %s", verb, failed, first)
	}
}
