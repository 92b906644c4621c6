package compare

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SamsaConfig is samsa from binary with extra serve flags.
func SamsaConfig(name, binary string, durable bool, extra ...string) Config {
	return samsaConfig(name, binary, durable, nil, extra...)
}

// SamsaTLSConfig is SamsaConfig with an SSL listener serving files'
// keystore.
func SamsaTLSConfig(name, binary string, durable bool, files *TLSFiles, extra ...string) Config {
	return samsaConfig(name, binary, durable, files, extra...)
}

func samsaConfig(name, binary string, durable bool, files *TLSFiles, extra ...string) Config {
	// Both brokers start groups without the initial rebalance delay (3 s
	// by default in each), so consumer-group workloads measure the join.
	// Transactions are served only with samsa.transactions.enable
	// (off by default until issue 18 is finished); the transactional
	// workloads need them, Kafka serves them always.
	fixed := []string{"--group.initial.rebalance.delay.ms", "0", "--samsa.transactions.enable", "true"}
	extra = append(fixed, extra...)
	settings := "samsa serve defaults (samsa.flush.policy=group: fsync before acknowledging)"
	if len(extra) > len(fixed) {
		settings = "samsa serve " + strings.Join(extra[len(fixed):], " ")
	}
	settings += "; group.initial.rebalance.delay.ms=0; samsa.transactions.enable=true"
	listener := "PLAINTEXT"
	var tlsConfig *tls.Config
	if files != nil {
		listener, tlsConfig = "SSL", files.Client
		settings += "; " + tlsSettings
		for _, kv := range files.serverSettings() {
			k, v, _ := strings.Cut(kv, "=")
			extra = append(extra, "--"+k, v)
		}
	}
	return Config{Name: name, Broker: "samsa", Settings: settings, Durable: durable, TLS: tlsConfig,
		start: func(ctx context.Context, dir string, port int) (*exec.Cmd, error) {
			args := append([]string{"serve", "--listeners", fmt.Sprintf("%s://127.0.0.1:%d", listener, port),
				"--log.dirs", filepath.Join(dir, "data")}, extra...)
			cmd := exec.Command(binary, args...)
			log, err := os.Create(filepath.Join(dir, "..", filepath.Base(dir)+".log"))
			if err != nil {
				return nil, err
			}
			cmd.Stdout, cmd.Stderr = log, log
			return cmd, cmd.Start()
		}}
}
