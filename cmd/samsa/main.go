package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "samsa:", err)
		os.Exit(1)
	}
}

// newRootCommand assembles the subcommands; each lives in its own file.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "samsa",
		Short:         "samsa is a Kafka-compatible message broker",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newServeCommand(),
		newVersionCommand(),
		newTopicCommand(),
		newBenchCommand(),
		newGroupCommand(),
		newProduceCommand(),
		newConsumeCommand(),
		newClusterCommand(),
		newTxnCommand(),
		newACLCommand(),
	)
	return root
}
