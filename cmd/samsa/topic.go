package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// bootstrapEnv names the environment variable that sets the default of
// --bootstrap-server for the admin commands.
const bootstrapEnv = "SAMSA_BOOTSTRAP_SERVER"

const defaultBootstrap = "127.0.0.1:9092"

// adminOptions are the flags every admin command shares.
type adminOptions struct {
	bootstrap string
	output    string
	timeout   time.Duration
	security  securityOptions
}

// newTopicCommand groups the topic admin subcommands. They speak the Kafka
// protocol through franz-go's kadm, so they work against Apache Kafka as
// well as samsa.
func newTopicCommand() *cobra.Command {
	opts := &adminOptions{}
	cmd := &cobra.Command{
		Use:   "topic",
		Short: "Create, list, describe, delete and configure topics",
		Long: `Create, list, describe, delete and configure topics on any Kafka-compatible
cluster (samsa or Apache Kafka). Output is a table, or JSON with --output json.
Errors name the Kafka error code and the broker's message, and exit non-zero.`,
	}
	addAdminFlags(cmd, opts)
	cmd.AddCommand(
		newTopicCreateCommand(opts),
		newTopicListCommand(opts),
		newTopicDescribeCommand(opts),
		newTopicDeleteCommand(opts),
		newTopicAlterConfigCommand(opts),
	)
	return cmd
}

// session is one admin command's connection to the cluster.
type session struct {
	adm    *kadm.Client
	ctx    context.Context
	cancel context.CancelFunc
	format outputFormat
}

// open checks the flags and connects (lazily: kgo dials on first request).
func (o *adminOptions) open(cmd *cobra.Command) (*session, error) {
	format, err := parseOutputFormat(o.output)
	if err != nil {
		return nil, err
	}
	seeds, err := parseSeeds(o.bootstrap)
	if err != nil {
		return nil, err
	}
	secure, err := o.security.kgoOpts()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID("samsa-admin")}, secure...)...)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32(o.timeout.Milliseconds()))
	return &session{adm: adm, ctx: ctx, cancel: cancel, format: format}, nil
}

func (s *session) close() {
	s.cancel()
	s.adm.Close()
}

// requestError explains a failed request (not a per-topic Kafka error).
func (o *adminOptions) requestError(what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer from %s within %v (is a broker running there? see --bootstrap-server)",
			what, o.bootstrap, o.timeout)
	}
	var dial *net.OpError
	if errors.As(err, &dial) {
		return fmt.Errorf("%s: %v (is a broker running at %s? see --bootstrap-server)", what, err, o.bootstrap)
	}
	return fmt.Errorf("%s: %s", what, kafkaErrorText(err, ""))
}

// keyValue is one key=value flag.
type keyValue struct {
	Key   string
	Value string
}

// parseKeyValues parses repeated key=value flags, in order. A key may
// appear once; the value may be empty ("key=") but the "=" is required.
func parseKeyValues(flag string, pairs []string) ([]keyValue, error) {
	out := make([]keyValue, 0, len(pairs))
	seen := make(map[string]bool, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s %q: want key=value", flag, p)
		}
		if seen[k] {
			return nil, fmt.Errorf("--%s: %s given twice", flag, k)
		}
		seen[k] = true
		out = append(out, keyValue{Key: k, Value: v})
	}
	return out, nil
}

// configMap is the form kadm's CreateTopics takes.
func configMap(kvs []keyValue) map[string]*string {
	if len(kvs) == 0 {
		return nil
	}
	m := make(map[string]*string, len(kvs))
	for _, kv := range kvs {
		v := kv.Value
		m[kv.Key] = &v
	}
	return m
}
