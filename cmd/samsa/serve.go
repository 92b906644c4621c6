package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newServeCommand runs a broker. (Being built: see the front-door issue.)
func newServeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a broker",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("the broker is not built yet")
		},
	}
	cmd.Flags().String("log.dirs", "./data", "data directory")
	return cmd
}
