package main

import (
	"sort"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newTopicDescribeCommand(opts *adminOptions) *cobra.Command {
	var allConfigs bool
	cmd := &cobra.Command{
		Use:   "describe [TOPIC...]",
		Short: "Show topics' partitions (leader, replicas, ISR) and configs",
		Long: `Show each topic's partitions (leader, replicas, in-sync replicas) and the
configs that differ from the defaults (with where each comes from). Without
TOPIC, every topic is described.`,
		RunE: func(cmd *cobra.Command, topics []string) error {
			s, err := opts.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			details, err := s.adm.ListTopics(s.ctx, topics...)
			if err != nil {
				return opts.requestError("describe topics", err)
			}
			var views []topicView
			var found []string
			for _, d := range details.Sorted() {
				v := viewTopic(d)
				if d.Err == nil {
					found = append(found, d.Topic)
				}
				views = append(views, v)
			}
			if len(found) > 0 {
				configs, err := s.adm.DescribeTopicConfigs(s.ctx, found...)
				if err != nil {
					return opts.requestError("describe topic configs", err)
				}
				byTopic := map[string]int{}
				for i := range views {
					byTopic[views[i].Name] = i
				}
				for _, rc := range configs {
					i, ok := byTopic[rc.Name]
					if !ok {
						continue
					}
					if rc.Err != nil {
						views[i].ConfigError = kafkaErrorText(rc.Err, rc.ErrMessage)
						continue
					}
					views[i].Configs = viewConfigs(rc.Configs, allConfigs)
				}
			}
			if err := writeTopicDescriptions(cmd.OutOrStdout(), s.format, views); err != nil {
				return err
			}
			results := make([]topicResult, 0, len(views))
			for _, v := range views {
				results = append(results, topicResult{Topic: v.Name, Error: v.Error, Message: v.Message})
			}
			return failedResults("describe", results)
		},
	}
	cmd.Flags().BoolVar(&allConfigs, "all-configs", false, "show every config, defaults included")
	return cmd
}

func viewConfigs(cs []kadmConfig, all bool) []configView {
	out := make([]configView, 0, len(cs))
	for _, c := range cs {
		if !all && c.Source == kmsg.ConfigSourceDefaultConfig {
			continue
		}
		v := configView{Name: c.Key, Source: c.Source.String(), Sensitive: c.Sensitive}
		if c.Value != nil {
			v.Value = *c.Value
		} else {
			v.Null = true
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
