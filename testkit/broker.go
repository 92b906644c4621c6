package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit/procstat"
)

// BrokerConfig says how to run a samsa broker process. The zero value runs
// the binary from SamsaBinary on a free loopback port with a fresh data
// directory.
type BrokerConfig struct {
	// Binary is the samsa executable; "" means SamsaBinary().
	Binary string
	// DataDir is the broker's log.dirs. "" makes a temporary directory
	// that Close removes; a given directory is kept (use it to start a
	// second broker on the data of a first).
	DataDir string
	// Port is the loopback port to listen on; 0 lets the broker bind a
	// free one (read back from its listening line). Restarts keep the
	// port, so clients can reconnect to the same address.
	Port int
	// Args are extra `samsa serve` flags, for example "--num.partitions",
	// "3", or "--config", "server.properties".
	Args []string
	// Env is added to the broker's environment (KEY=VALUE).
	Env []string
	// Limits are prlimit(1) options applied to the broker process from
	// its start, for example "--nofile=256" or "--as=1073741824": the
	// broker runs as `prlimit LIMITS... -- samsa serve ...` (prlimit execs
	// it, so PID is still the broker's). Tests of resource exhaustion use
	// them; they need util-linux's prlimit on PATH.
	Limits []string
	// ReadyTimeout bounds the wait for readiness; default 30s, or
	// $SAMSA_TESTKIT_READY_TIMEOUT (a Go duration) for slow machines.
	ReadyTimeout time.Duration
	// StopTimeout bounds the wait for exit after SIGTERM; default 15s.
	StopTimeout time.Duration
	// Output, when set, also receives everything the broker prints.
	Output io.Writer
}

// BrokerProcess is a `samsa serve` running as a child process. It lives
// across restarts: the data directory, the port and the captured output
// carry over. Methods are safe for concurrent use.
type BrokerProcess struct {
	cfg         BrokerConfig
	bin         string
	dataDir     string
	ownsDataDir bool
	out         *outputLog

	mu      sync.Mutex
	port    int
	addr    string
	proc    *child // the current run; nil before the first Start
	startup time.Duration
}

// ReadyTimeoutEnv names the environment variable that overrides the
// default ReadyTimeout.
const ReadyTimeoutEnv = "SAMSA_TESTKIT_READY_TIMEOUT"

// readyTimeout is def, or $SAMSA_TESTKIT_READY_TIMEOUT when that is a
// positive Go duration (slow machines).
func readyTimeout(def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(ReadyTimeoutEnv)); err == nil && d > 0 {
		return d
	}
	return def
}

// orDefault is d, or def when d is zero (an unset config field).
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// readyLine matches the line samsa serve prints once it accepts
// connections: "samsa: listening on 127.0.0.1:PORT (PLAINTEXT), data in DIR".
var readyLine = regexp.MustCompile(`listening on ([^\s,"()]+)`)

// StartBroker launches a broker for test t and fails t if it does not
// become ready. When t ends, the broker is stopped with SIGTERM (a non-zero
// exit fails t), its temporary data directory is removed, and, if t
// failed, its output is written to the test log.
func StartBroker(t testing.TB, cfg BrokerConfig) *BrokerProcess {
	t.Helper()
	b, err := LaunchBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.LogOnFailure(t)
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Errorf("stopping the broker: %v", err)
		}
		b.Close()
	})
	return b
}

// LaunchBroker starts a broker process and waits until it is ready: it has
// printed its listening line and accepts a TCP connection. It is
// StartBroker without a test, for TestMain and programs; call Close when
// done.
func LaunchBroker(cfg BrokerConfig) (*BrokerProcess, error) {
	cfg.ReadyTimeout = orDefault(cfg.ReadyTimeout, readyTimeout(30*time.Second))
	cfg.StopTimeout = orDefault(cfg.StopTimeout, 15*time.Second)
	b := &BrokerProcess{cfg: cfg, bin: cfg.Binary, dataDir: cfg.DataDir, port: cfg.Port,
		out: &outputLog{tee: cfg.Output}}
	if b.bin == "" {
		bin, err := SamsaBinary()
		if err != nil {
			return nil, err
		}
		b.bin = bin
	}
	if b.dataDir == "" {
		dir, err := os.MkdirTemp("", "samsa-broker-")
		if err != nil {
			return nil, fmt.Errorf("testkit: %w", err)
		}
		b.dataDir, b.ownsDataDir = dir, true
	}
	if err := b.Start(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Start starts the broker again after Stop or Kill, on the same port and
// data directory, and waits until it is ready.
func (b *BrokerProcess) Start() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc.running() {
		return errors.New("testkit: broker is already running")
	}
	ready := make(chan string, 1)
	b.out.setWatch(func(line string) {
		if m := readyLine.FindStringSubmatch(line); m != nil {
			select {
			case ready <- m[1]:
			default:
			}
		}
	})
	args := append([]string{"serve",
		"--listeners", "PLAINTEXT://127.0.0.1:" + strconv.Itoa(b.port),
		"--log.dirs", b.dataDir,
	}, b.cfg.Args...)
	cmd := exec.Command(b.bin, args...)
	if len(b.cfg.Limits) > 0 {
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			return fmt.Errorf("testkit: BrokerConfig.Limits needs prlimit (util-linux): %w", err)
		}
		cmd = exec.Command(prlimit, append(append(append([]string(nil), b.cfg.Limits...), "--", b.bin), args...)...)
	}
	cmd.Env = append(os.Environ(), b.cfg.Env...)
	cmd.Stdout = b.out // one writer for both: exec then shares one pipe
	cmd.Stderr = b.out

	mark := b.out.mark()
	began := time.Now()
	proc, err := startChild(cmd)
	if err != nil {
		return fmt.Errorf("testkit: starting %s: %w", b.bin, err)
	}
	b.proc = proc
	exited := proc.exited

	deadline := time.NewTimer(b.cfg.ReadyTimeout)
	defer deadline.Stop()
	var addr string
	select {
	case addr = <-ready:
	case <-exited:
		return fmt.Errorf("testkit: broker exited before it was ready (%s); output:\n%s",
			cmd.ProcessState, tail(b.out.since(mark)))
	case <-deadline.C:
		b.proc.kill()
		return fmt.Errorf("testkit: broker printed no listening line within %v; output:\n%s",
			b.cfg.ReadyTimeout, tail(b.out.since(mark)))
	}
	// The line says the listener exists; a connection proves it accepts.
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			b.startup = time.Since(began)
			conn.Close()
			break
		}
		select {
		case <-exited:
			return fmt.Errorf("testkit: broker exited before accepting a connection (%s); output:\n%s",
				cmd.ProcessState, tail(b.out.since(mark)))
		case <-deadline.C:
			b.proc.kill()
			return fmt.Errorf("testkit: broker at %s accepted no connection within %v: %v",
				addr, b.cfg.ReadyTimeout, err)
		case <-time.After(2 * time.Millisecond):
		}
	}
	b.addr = addr
	if _, portText, err := net.SplitHostPort(addr); err == nil {
		if port, err := strconv.Atoi(portText); err == nil {
			b.port = port // a restart comes back on the port port 0 got
		}
	}
	return nil
}

// Addr is the broker's "host:port" address.
func (b *BrokerProcess) Addr() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.addr
}

// DataDir is the broker's log.dirs directory.
func (b *BrokerProcess) DataDir() string { return b.dataDir }

// PID is the process id of the running broker, or 0 when it is not running.
func (b *BrokerProcess) PID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc.pid()
}

// StartupTime is how long the last Start took, from just before the
// process was started until the first TCP connection was accepted.
func (b *BrokerProcess) StartupTime() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.startup
}

// Running reports whether the broker process is alive.
func (b *BrokerProcess) Running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc.running()
}

// ExitState describes how the last process ended ("exit status 0",
// "signal: killed"), or "" while it runs or before it started.
func (b *BrokerProcess) ExitState() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc.state()
}

// Stop sends SIGTERM and waits for the broker to exit. It returns an error
// if the broker had already died, does not exit within StopTimeout (it is
// then killed), or exits with a status other than 0. Stopping a broker
// that was stopped or killed through this handle is a no-op.
func (b *BrokerProcess) Stop() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	state, err := b.proc.terminate(b.cfg.StopTimeout)
	switch {
	case errors.Is(err, errDiedOnItsOwn):
		return fmt.Errorf("testkit: broker had already exited (%s)", state)
	case errors.Is(err, errStopTimeout):
		return fmt.Errorf("testkit: broker did not exit within %v of SIGTERM; killed", b.cfg.StopTimeout)
	case err != nil:
		return fmt.Errorf("testkit: SIGTERM: %w", err)
	}
	if state != nil && state.ExitCode() != 0 {
		return fmt.Errorf("testkit: broker exited with %s after SIGTERM", state)
	}
	return nil
}

// Kill ends the broker with SIGKILL, as a crash or power cut would, and
// waits until it is gone.
func (b *BrokerProcess) Kill() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.proc.kill()
}

// Restart stops the broker with SIGTERM (failing if it does not exit
// cleanly) and starts it again on the same port and data directory.
func (b *BrokerProcess) Restart() error {
	if err := b.Stop(); err != nil {
		return err
	}
	return b.Start()
}

// Usage reads the running broker's CPU seconds and resident memory (VmRSS,
// VmHWM) from /proc.
func (b *BrokerProcess) Usage() (procstat.Usage, error) {
	pid := b.PID()
	if pid == 0 {
		return procstat.Usage{}, errors.New("testkit: broker is not running")
	}
	return procstat.Read(pid)
}

// Output returns what the broker has printed over all its runs (the last
// few MiB of it).
func (b *BrokerProcess) Output() string { return b.out.String() }

// OutputMark and OutputSince let a test look at what the broker printed
// during one step: take a mark, act, then read OutputSince(mark).
func (b *BrokerProcess) OutputMark() int64 { return b.out.mark() }

// OutputSince returns the output printed after mark.
func (b *BrokerProcess) OutputSince(mark int64) string { return b.out.since(mark) }

// WaitOutput waits until the broker's output after mark contains substr
// (a log line the test expects), or ctx ends; it returns that output.
func (b *BrokerProcess) WaitOutput(ctx context.Context, mark int64, substr string) (string, error) {
	return b.out.waitFor(ctx, mark, substr)
}

// LogOnFailure writes to t's log, when t ends failed, what the broker
// printed while t ran. Tests sharing one broker call it each.
func (b *BrokerProcess) LogOnFailure(t testing.TB) {
	mark := b.out.mark()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("broker %s output while %s ran:\n%s", b.Addr(), t.Name(), tail(b.out.since(mark)))
		}
	})
}

// Close kills the broker if it still runs and removes the data directory
// if LaunchBroker made it.
func (b *BrokerProcess) Close() {
	b.Kill()
	if b.ownsDataDir {
		_ = os.RemoveAll(b.dataDir)
	}
}

// tail keeps the end of a long log for error messages.
func tail(s string) string {
	const max = 64 << 10
	if len(s) > max {
		return "...\n" + s[len(s)-max:]
	}
	return s
}
