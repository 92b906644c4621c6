package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// clientOptions are the connection flags of produce and consume, named as
// kcat's: -b for the brokers.
type clientOptions struct {
	bootstrap string
	clientID  string
	security  securityOptions
}

func (o *clientOptions) addFlags(cmd *cobra.Command, clientID string) {
	f := cmd.Flags()
	f.StringVarP(&o.bootstrap, "bootstrap-server", "b", bootstrapDefault(), "comma-separated broker addresses (env "+bootstrapEnv+")")
	f.StringVar(&o.clientID, "client-id", clientID, "client.id sent to the brokers")
	o.security.addFlags(f)
}

// clientOpts are the franz-go options of the connection flags.
func (o *clientOptions) clientOpts() ([]kgo.Opt, error) {
	seeds, err := parseSeeds(o.bootstrap)
	if err != nil {
		return nil, err
	}
	secure, err := o.security.kgoOpts()
	if err != nil {
		return nil, err
	}
	return append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID(o.clientID)}, secure...), nil
}

// unescape turns the escapes kcat accepts in delimiters and formats
// (\n, \t, \r, \0, \\) into their characters.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t", `\r`, "\r", `\0`, "\x00")
	return r.Replace(s)
}

// parseHeaders parses repeated -H key=value flags (a key may repeat, as
// Kafka headers may).
func parseHeaders(hs []string) ([]kgo.RecordHeader, error) {
	out := make([]kgo.RecordHeader, 0, len(hs))
	for _, h := range hs {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-H %q: want key=value", h)
		}
		out = append(out, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	return out, nil
}
