package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// bootstrapDefault is --bootstrap-server's default: SAMSA_BOOTSTRAP_SERVER,
// else the local broker.
func bootstrapDefault() string {
	if b := os.Getenv(bootstrapEnv); b != "" {
		return b
	}
	return defaultBootstrap
}

// addAdminFlags adds the flags every admin command shares to cmd's
// persistent flags.
func addAdminFlags(cmd *cobra.Command, opts *adminOptions) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&opts.bootstrap, "bootstrap-server", bootstrapDefault(), "comma-separated broker addresses (env "+bootstrapEnv+")")
	pf.StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	pf.DurationVar(&opts.timeout, "timeout", defaultTimeout, "give up after this long")
	opts.security.addFlags(pf)
}

// defaultTimeout bounds an admin command.
const defaultTimeout = 15 * time.Second

// parseSeeds splits a comma-separated broker list.
func parseSeeds(list string) ([]string, error) {
	var seeds []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	if len(seeds) == 0 {
		return nil, fmt.Errorf("--bootstrap-server is empty")
	}
	return seeds, nil
}

// with opens a session, runs fn with it and closes it.
func (o *adminOptions) with(cmd *cobra.Command, fn func(*session) error) error {
	s, err := o.open(cmd)
	if err != nil {
		return err
	}
	defer s.close()
	return fn(s)
}
