package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newTopicAlterConfigCommand(opts *adminOptions) *cobra.Command {
	var sets, deletes []string
	var validateOnly bool
	cmd := &cobra.Command{
		Use:   "alter-config TOPIC... (--set key=value | --delete key)...",
		Short: "Change or remove topic config overrides (IncrementalAlterConfigs)",
		Long: `Change topic configs in place: --set adds or replaces an override, --delete
removes one (the topic then follows the broker's default). Other overrides are
left as they are (IncrementalAlterConfigs).`,
		Example: `  samsa topic alter-config orders --set retention.ms=3600000 --delete cleanup.policy`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, topics []string) error {
			alters, err := buildAlterConfigs(sets, deletes)
			if err != nil {
				return err
			}
			s, err := opts.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			alter := s.adm.AlterTopicConfigs
			if validateOnly {
				alter = s.adm.ValidateAlterTopicConfigs
			}
			resps, err := alter(s.ctx, alters, topics...)
			if err != nil {
				return opts.requestError("alter topic configs", err)
			}
			results := make([]topicResult, 0, len(resps))
			for _, r := range resps {
				res := topicResult{Topic: r.Name, Outcome: "altered"}
				if validateOnly {
					res.Outcome = "valid (not altered: --validate-only)"
				}
				if r.Err != nil {
					res.Outcome = ""
					res.setError(r.Err, r.ErrMessage)
				}
				results = append(results, res)
			}
			if err := writeResults(cmd.OutOrStdout(), s.format, results); err != nil {
				return err
			}
			return failedResults("alter-config", results)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&sets, "set", nil, "set a config: key=value (repeatable)")
	f.StringArrayVar(&deletes, "delete", nil, "remove a config override: key (repeatable)")
	f.BoolVar(&validateOnly, "validate-only", false, "ask the broker to check the change without applying it")
	return cmd
}

// buildAlterConfigs turns --set and --delete into incremental operations,
// in flag order; a key may be named once.
func buildAlterConfigs(sets, deletes []string) ([]kadm.AlterConfig, error) {
	if len(sets)+len(deletes) == 0 {
		return nil, fmt.Errorf("nothing to change: give --set key=value or --delete key")
	}
	kvs, err := parseKeyValues("set", sets)
	if err != nil {
		return nil, err
	}
	named := map[string]bool{}
	out := make([]kadm.AlterConfig, 0, len(kvs)+len(deletes))
	for _, kv := range kvs {
		v := kv.Value
		named[kv.Key] = true
		out = append(out, kadm.AlterConfig{Op: kadm.SetConfig, Name: kv.Key, Value: &v})
	}
	for _, k := range deletes {
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, fmt.Errorf("--delete needs a config name")
		}
		if named[k] {
			return nil, fmt.Errorf("%s is named twice in --set/--delete", k)
		}
		named[k] = true
		out = append(out, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	return out, nil
}
