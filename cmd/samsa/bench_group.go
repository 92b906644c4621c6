package main

import (
	"context"
	"fmt"
	"io"
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
			overrideTopic(cmd, w, &g.Topic, &g.Partitions)
			res, err := runGroupBench(cmd, *output, func(ctx context.Context) (*bench.GroupResult, error) {
				res, err := bench.RunGroup(ctx, g)
				return &res, err
			})
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

// overrideTopic sets topic and partitions from the shared --topic and
// --partitions flags when they were given: the group benches have
// defaults of their own.
func overrideTopic(cmd *cobra.Command, w *bench.Workload, topic *string, partitions *int32) {
	if cmd.Flags().Changed("topic") {
		*topic = w.Topic
	}
	if cmd.Flags().Changed("partitions") {
		*partitions = w.Partitions
	}
}

// newBenchRebalanceCommand is `samsa bench group-rebalance`: time for
// --members consumers to form a group, then for it to be stable again
// after one member joins and after one leaves.
func newBenchRebalanceCommand(brokers *string, w *bench.Workload, output *string) *cobra.Command {
	g := bench.DefaultRebalanceWorkload()
	cmd := &cobra.Command{
		Use:   "group-rebalance",
		Short: "Consumer group formation, then one member joining and leaving, until stable",
		Long: `Put one record in each of --partitions partitions, start --members consumers
at once (--protocol classic: cooperative-sticky; consumer: KIP-848, the broker
assigns) and time until every partition is owned by one member and fetched
from and the coordinator says Stable; then --repetitions times start one more
member and, once stable, close it, timing each until stable again. Run the
broker with --group.initial.rebalance.delay.ms 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g.Brokers, g.TLS = strings.Split(*brokers, ","), w.TLS
			overrideTopic(cmd, w, &g.Topic, &g.Partitions)
			_, err := runGroupBench(cmd, *output, func(ctx context.Context) (*bench.RebalanceResult, error) {
				res, err := bench.RunRebalance(ctx, g)
				return &res, err
			})
			return err
		},
	}
	cmd.Flags().IntVar(&g.Members, "members", g.Members, "group members starting at once")
	cmd.Flags().StringVar(&g.Protocol, "protocol", g.Protocol, "group protocol: classic or consumer (KIP-848)")
	cmd.Flags().IntVar(&g.Repetitions, "repetitions", g.Repetitions, "join+leave cycles after the group formed")
	return cmd
}

// runGroupBench runs a group bench until done or SIGINT/SIGTERM and
// writes its result as --output says.
func runGroupBench[R interface{ WriteTable(io.Writer) error }](cmd *cobra.Command, output string, run func(context.Context) (R, error)) (R, error) {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx)
	if err != nil {
		return res, err
	}
	if output == "json" {
		return res, writeJSON(cmd.OutOrStdout(), res)
	}
	return res, res.WriteTable(cmd.OutOrStdout())
}
