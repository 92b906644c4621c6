package samsa

import (
	"log/slog"
	"os"

	"github.com/samsa-io/samsa/actors/plugin"
)

// Options configure a broker run by this package.
type Options struct {
	// ConfigFile is a Kafka server.properties file; empty: $SAMSA_CONFIG,
	// if set.
	ConfigFile string
	// Properties are server.properties keys and values, applied over the
	// file and the environment.
	Properties map[string]string
	// Environ is the environment SAMSA_* configs are read from (nil: the
	// process's).
	Environ []string
	// Logger receives the broker's and the plug-ins' log (default: text
	// on standard error).
	Logger *slog.Logger
	// Plugins tunes the plug-ins' host (backoff); its ClientOptions are
	// added to the options that point the plug-ins at the broker's own
	// listener, for example SASL credentials when the broker's only
	// listeners speak SASL.
	Plugins plugin.Options
}

// logger is Options.Logger, or text on standard error.
func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}
