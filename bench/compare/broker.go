package compare

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit/procstat"
)

// Config is one broker configuration under test.
type Config struct {
	Name     string // "samsa", "kafka", "samsa-noflush", "kafka-flush1"
	Broker   string // "samsa" or "kafka"
	Settings string // human description of the settings, for the report
	Durable  bool   // acknowledges only after fsync
	// TLS is the clients' TLS configuration when the broker's listener
	// is SSL (tls.go); nil: PLAINTEXT.
	TLS   *tls.Config
	start func(ctx context.Context, dir string, port int) (*exec.Cmd, error)
}

// Running is a started broker.
type Running struct {
	Config  Config
	Addr    string
	PID     int
	Startup time.Duration // process start to first accepted TCP connection
	Ready   time.Duration // process start to first answered Metadata request
	IdleRSS int64         // resident memory once ready, before any workload
	cmd     *exec.Cmd
	dir     string
	exited  chan error
}

// FreePort returns a loopback port nobody listens on right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start launches c in a fresh temporary directory and waits until it
// answers Metadata (at most timeout).
func Start(ctx context.Context, c Config, timeout time.Duration) (*Running, error) {
	dir, err := os.MkdirTemp("", "bench-compare-"+c.Name+"-")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	begin := time.Now()
	cmd, err := c.start(ctx, dir, port)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := &Running{Config: c, Addr: "127.0.0.1:" + strconv.Itoa(port), PID: cmd.Process.Pid, cmd: cmd, dir: dir, exited: make(chan error, 1)}
	go func() { r.exited <- cmd.Wait() }()
	deadline := time.Now().Add(timeout)
	// Poll the port: the process gives no event for "listening".
	for {
		conn, err := net.DialTimeout("tcp", r.Addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			r.Startup = time.Since(begin)
			break
		}
		if err := r.failed(deadline); err != nil {
			return nil, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	opts := []kgo.Opt{kgo.SeedBrokers(r.Addr)}
	if c.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(c.TLS.Clone()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		_ = r.Stop() // the client error is the one worth reporting
		return nil, err
	}
	defer cl.Close()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := cl.Ping(pctx)
		cancel()
		if err == nil {
			r.Ready = time.Since(begin)
			break
		}
		if err := r.failed(deadline); err != nil {
			return nil, err
		}
	}
	if u, err := procstat.Read(r.PID); err == nil {
		r.IdleRSS = u.RSSBytes
	}
	return r, nil
}

// failed reports why waiting must stop: the process exited or the
// deadline passed (the broker is then stopped).
func (r *Running) failed(deadline time.Time) error {
	select {
	case err := <-r.exited:
		r.exited <- err
		os.RemoveAll(r.dir)
		log, _ := os.ReadFile(r.dir + ".log")
		os.Remove(r.dir + ".log")
		return fmt.Errorf("compare: %s exited during startup: %v: %s", r.Config.Name, err, tail(string(log)))
	default:
	}
	if time.Now().After(deadline) {
		_ = r.Stop() // the timeout is the one worth reporting
		return fmt.Errorf("compare: %s not ready on %s in time", r.Config.Name, r.Addr)
	}
	return nil
}

// Usage samples the broker's CPU and memory now.
func (r *Running) Usage() (procstat.Usage, error) { return procstat.Read(r.PID) }

// Stop sends SIGTERM, waits up to 30 s, then kills, and removes the data
// and the broker's log.
func (r *Running) Stop() error {
	defer os.RemoveAll(r.dir)
	defer os.Remove(r.dir + ".log")
	select {
	case err := <-r.exited:
		r.exited <- err
		return err
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.exited:
		r.exited <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 143 {
			return nil // the JVM reports SIGTERM as 143
		}
		return err
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		return errors.New("compare: " + r.Config.Name + " did not stop within 30s; killed")
	}
}
