package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/samsa-io/samsa/actors/config"
)

// Environment variables samsa reads that are not broker configs.
const (
	envConfigFile = "SAMSA_CONFIG"    // path of a server.properties, like --config
	envLogLevel   = "SAMSA_LOG_LEVEL" // debug, info, warn, error
	envLogFormat  = "SAMSA_LOG_FORMAT"
)

// notConfigEnv are SAMSA_* variables that must not be read as configs
// (tools and test harnesses set some of them).
var notConfigEnv = []string{envConfigFile, envLogLevel, envLogFormat, "SAMSA_BINARY"}

// addConfigFlags declares one flag per broker config, under its Kafka
// name (--log.dirs, --num.partitions, ...), so anything a
// server.properties can say a flag can override.
func addConfigFlags(fs *pflag.FlagSet) {
	for _, d := range config.BrokerDefs() {
		usage := d.Doc
		if d.HasDefault() {
			usage += fmt.Sprintf(" (default %q)", d.Default)
		}
		fs.String(d.Name, "", usage)
	}
}

// loadBrokerConfig builds the broker configuration with the precedence
// flags > environment (SAMSA_*) > file (--config or SAMSA_CONFIG) >
// defaults.
func loadBrokerConfig(cmd *cobra.Command, configFile string, environ []string) (*config.Broker, error) {
	inputs, err := config.FileAndEnv(configFile, environ, notConfigEnv...)
	if err != nil {
		return nil, err
	}
	flags := make(map[string]string)
	for _, d := range config.BrokerDefs() {
		if f := cmd.Flags().Lookup(d.Name); f != nil && f.Changed {
			flags[d.Name] = f.Value.String()
		}
	}
	if len(flags) > 0 {
		inputs = append(inputs, config.Input{Origin: "flags", Values: flags})
	}
	return config.Load(inputs...)
}
