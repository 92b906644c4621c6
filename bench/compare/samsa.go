package compare

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SamsaConfig is samsa from binary with extra serve flags.
func SamsaConfig(name, binary string, durable bool, extra ...string) Config {
	// Both brokers start groups without the initial rebalance delay (3 s
	// by default in each), so consumer-group workloads measure the join.
	extra = append([]string{"--group.initial.rebalance.delay.ms", "0"}, extra...)
	settings := "samsa serve defaults (samsa.flush.policy=group: fsync before acknowledging)"
	if len(extra) > 2 {
		settings = "samsa serve " + strings.Join(extra[2:], " ")
	}
	settings += "; group.initial.rebalance.delay.ms=0"
	return Config{Name: name, Broker: "samsa", Settings: settings, Durable: durable,
		start: func(ctx context.Context, dir string, port int) (*exec.Cmd, error) {
			args := append([]string{"serve", "--listeners", fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
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
