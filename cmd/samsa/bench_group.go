package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/bench"
)

// newBenchGroupCommand is `samsa bench group`: time for --members clients
// to form a Stable group, then offset commits per second into one group.
// --topic and --partitions apply when given; otherwise the group bench
// uses its own topic.
func newBenchGroupCommand(brokers *string, w *bench.Workload, output *string) *cobra.Command {
	g := bench.DefaultGroupWorkload()
	cmd := &cobra.Command{
		Use:   "group",
		Short: "Members joining to Stable, then offset commits per second for one group",
		Long: `Start --members group consumers at once and time until every one holds its
assignment (run the broker with --group.initial.rebalance.delay.ms 0, or the
figure includes that delay), then send --commits offset commits to one group
from --commit-workers concurrent committers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g.Brokers = strings.Split(*brokers, ",")
			if cmd.Flags().Changed("topic") {
				g.Topic = w.Topic
			}
			if cmd.Flags().Changed("partitions") {
				g.Partitions = w.Partitions
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := bench.RunGroup(ctx, g)
			if err != nil {
				return err
			}
			if *output == "json" {
				err = res.WriteJSON(cmd.OutOrStdout())
			} else {
				err = res.WriteTable(cmd.OutOrStdout())
			}
			if err == nil && res.Errors > 0 {
				err = fmt.Errorf("%d commits failed: %s", res.Errors, res.FirstError)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&g.Members, "members", g.Members, "group members joining at once")
	f.Int64Var(&g.Commits, "commits", g.Commits, "offset commits in total (0: only the join)")
	f.IntVar(&g.CommitWorkers, "commit-workers", g.CommitWorkers, "concurrent committers")
	return cmd
}
