package samsa

import (
	"os"

	"github.com/samsa-io/samsa/actors/config"
)

// loadConfig layers, later winning: the server.properties file
// (Options.ConfigFile or $SAMSA_CONFIG), SAMSA_* environment variables,
// then Options.Properties, as `samsa serve` layers file, environment and
// flags.
func loadConfig(opts Options) (*config.Broker, error) {
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	inputs, err := config.FileAndEnv(opts.ConfigFile, environ, "SAMSA_LOG_LEVEL", "SAMSA_LOG_FORMAT", "SAMSA_BINARY")
	if err != nil {
		return nil, err
	}
	if len(opts.Properties) > 0 {
		inputs = append(inputs, config.Input{Origin: "samsa.Options.Properties", Values: opts.Properties})
	}
	return config.Load(inputs...)
}
