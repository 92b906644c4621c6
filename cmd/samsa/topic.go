package main

import "github.com/spf13/cobra"

// newTopicCommand groups the topic admin subcommands. (Being built.)
func newTopicCommand() *cobra.Command {
	return &cobra.Command{Use: "topic", Short: "Create, list, describe, delete and configure topics"}
}
