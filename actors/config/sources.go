package config

import (
	"fmt"
	"os"
	"strings"
)

// EnvConfigFile is the environment variable naming a server.properties
// file to read when none is given explicitly.
const EnvConfigFile = "SAMSA_CONFIG"

// FileAndEnv returns the first two layers of a broker's configuration, in
// order of precedence: the server.properties file (file, or
// $SAMSA_CONFIG when file is empty; none when both are) and the SAMSA_*
// variables of environ, leaving out SAMSA_CONFIG and the names in skip.
// `samsa serve` and pkg/samsa add their own layers over these.
func FileAndEnv(file string, environ []string, skip ...string) ([]Input, error) {
	var inputs []Input
	if file == "" {
		for _, kv := range environ {
			if v, ok := strings.CutPrefix(kv, EnvConfigFile+"="); ok {
				file = v
			}
		}
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		vals, err := ParseProperties(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("config file %s: %w", file, err)
		}
		inputs = append(inputs, Input{Origin: file, Values: vals})
	}
	if env := FromEnv(environ, append(skip, EnvConfigFile)...); len(env) > 0 {
		inputs = append(inputs, Input{Origin: "environment", Values: env})
	}
	return inputs, nil
}
