package plugins

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/samsa-io/samsa/testkit"
)

// process is the example binary running as its own process.
type process struct {
	addr   string // its Kafka listener
	cmd    *exec.Cmd
	exited chan error // its exit, once
	waited bool       // exited was read (on the test's goroutine)
}

// startBinary builds samsa-with-plugins and starts it on a free port with
// data in a temp dir, configured by SAMSA_* variables only; it is killed
// at cleanup if still running, and its log shown if t failed.
func startBinary(t *testing.T) *process {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "samsa-with-plugins")
	if out, err := exec.Command("go", "build", "-o", bin, "./samsa-with-plugins").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port, err := testkit.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{addr: "127.0.0.1:" + strconv.Itoa(port), cmd: exec.Command(bin), exited: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), "SAMSA_LISTENERS=PLAINTEXT://"+p.addr, "SAMSA_LOG_DIRS="+t.TempDir(),
		"SAMSA_GROUP_INITIAL_REBALANCE_DELAY_MS=0", "SAMSA_NUM_NETWORK_THREADS=1")
	var stderr bytes.Buffer // read only after the process exits
	p.cmd.Stderr = &stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if !p.waited {
			_ = p.cmd.Process.Kill()
			<-p.exited //nolint:errcheck // killed: the status says only that
		}
		if t.Failed() {
			t.Logf("the binary's log:\n%s", stderr.String())
		}
	})
	return p
}
