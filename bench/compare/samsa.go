package compare

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// SamsaConfig is samsa from binary with extra serve flags.
func SamsaConfig(name, binary string, durable bool, extra ...string) Config {
	settings := "samsa serve defaults (samsa.flush.policy=group: fsync before acknowledging)"
	if len(extra) > 0 {
		settings = fmt.Sprintf("samsa serve %v", extra)
	}
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
