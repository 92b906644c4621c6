package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ZooKeeperJar is where Debian's zookeeper package installs the server;
// its manifest's Class-Path names every dependency, so it alone is the
// class path.
const ZooKeeperJar = "/usr/share/java/zookeeper.jar"

// ZooKeeperConfig says how to run a ZooKeeper server. The zero value runs
// Debian's jar on a free loopback port with a fresh data directory and a
// 500 ms tick (sessions can then time out in as little as 1 s).
type ZooKeeperConfig struct {
	Jar          string        // default ZooKeeperJar
	Java         string        // default "java" from PATH
	DataDir      string        // "" makes a temporary directory that Close removes
	Port         int           // 0 picks a free port
	TickTime     time.Duration // default 500ms
	ReadyTimeout time.Duration // default 30s
	Output       io.Writer     // also receives the server's output
}

// ZooKeeper is a standalone ZooKeeper server in a child JVM.
type ZooKeeper struct {
	cfg         ZooKeeperConfig
	dataDir     string
	ownsDataDir bool
	addr        string
	out         *outputLog

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// ZooKeeperAvailable reports whether a ZooKeeper server and java can be
// run here.
func ZooKeeperAvailable() bool {
	_, errJar := os.Stat(ZooKeeperJar)
	_, errJava := exec.LookPath("java")
	return errJar == nil && errJava == nil
}

// StartZooKeeper launches a ZooKeeper server for test t and stops it when t
// ends. Without Debian's zookeeper package it skips t, or fails it in CI.
func StartZooKeeper(t testing.TB, cfg ZooKeeperConfig) *ZooKeeper {
	t.Helper()
	if cfg.Jar == "" {
		Require(t, ZooKeeperAvailable(), "ZooKeeper is not installed ("+ZooKeeperJar+" and java; run `make deps`)")
	}
	z, err := LaunchZooKeeper(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("zookeeper %s output:\n%s", z.Addr(), tail(z.out.String()))
		}
		z.Close()
	})
	return z
}

// LaunchZooKeeper starts a server and waits until it serves: until its
// `srvr` four-letter command reports a Mode (an `imok` from `ruok` comes
// before the server accepts sessions, so it is not enough).
func LaunchZooKeeper(cfg ZooKeeperConfig) (*ZooKeeper, error) {
	if cfg.Jar == "" {
		cfg.Jar = ZooKeeperJar
	}
	if cfg.Java == "" {
		cfg.Java = "java"
	}
	if cfg.TickTime == 0 {
		cfg.TickTime = 500 * time.Millisecond
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 30 * time.Second
	}
	z := &ZooKeeper{cfg: cfg, dataDir: cfg.DataDir, out: &outputLog{tee: cfg.Output}}
	if z.dataDir == "" {
		dir, err := os.MkdirTemp("", "samsa-zookeeper-")
		if err != nil {
			return nil, fmt.Errorf("testkit: %w", err)
		}
		z.dataDir, z.ownsDataDir = dir, true
	}
	port := cfg.Port
	if port == 0 {
		p, err := FreePort()
		if err != nil {
			z.Close()
			return nil, err
		}
		port = p
	}
	z.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := z.start(port); err != nil {
		z.Close()
		return nil, err
	}
	return z, nil
}

func (z *ZooKeeper) start(port int) error {
	// A config file rather than the PORT DATADIR TICK arguments: only the
	// file can bind the client port to loopback.
	cfgPath := z.dataDir + "/zoo.cfg"
	cfgText := fmt.Sprintf("tickTime=%d\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n",
		z.cfg.TickTime.Milliseconds(), z.dataDir, port)
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o644); err != nil {
		return fmt.Errorf("testkit: %w", err)
	}
	cmd := exec.Command(z.cfg.Java,
		"-Dzookeeper.admin.enableServer=false", // its Jetty would take :8080
		"-Dzookeeper.4lw.commands.whitelist=srvr,ruok",
		"-cp", z.cfg.Jar,
		"org.apache.zookeeper.server.ZooKeeperServerMain", cfgPath)
	cmd.Stdout = z.out
	cmd.Stderr = z.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testkit: starting zookeeper: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	z.mu.Lock()
	z.cmd, z.exited = cmd, exited
	z.mu.Unlock()

	deadline := time.Now().Add(z.cfg.ReadyTimeout)
	for {
		status, err := zkFourLetter(z.addr, "srvr")
		if err == nil && strings.Contains(status, "Mode:") {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("testkit: zookeeper exited before serving (%s); output:\n%s",
				cmd.ProcessState, tail(z.out.String()))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("testkit: zookeeper not serving on %s within %v (last: %q, %v); output:\n%s",
				z.addr, z.cfg.ReadyTimeout, status, err, tail(z.out.String()))
		}
	}
}

// zkFourLetter sends a four-letter command and returns the whole answer.
func zkFourLetter(addr, cmd string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", err
	}
	data, err := io.ReadAll(bufio.NewReader(conn))
	return string(data), err
}

// Addr is the server's "127.0.0.1:port" client address.
func (z *ZooKeeper) Addr() string { return z.addr }

// PID is the JVM's process id, or 0 when it is not running.
func (z *ZooKeeper) PID() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.cmd == nil {
		return 0
	}
	select {
	case <-z.exited:
		return 0
	default:
		return z.cmd.Process.Pid
	}
}

// Status returns the server's answer to `srvr`.
func (z *ZooKeeper) Status() (string, error) {
	s, err := zkFourLetter(z.addr, "srvr")
	if err != nil {
		return "", fmt.Errorf("testkit: zookeeper srvr: %w", err)
	}
	if !strings.Contains(s, "Mode:") {
		return s, errors.New("testkit: zookeeper is not serving")
	}
	return s, nil
}

// Freeze stops the JVM with SIGSTOP, so sessions time out as on a hung
// server; Thaw resumes it.
func (z *ZooKeeper) Freeze() error { return z.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server.
func (z *ZooKeeper) Thaw() error { return z.signal(syscall.SIGCONT) }

func (z *ZooKeeper) signal(sig syscall.Signal) error {
	pid := z.PID()
	if pid == 0 {
		return errors.New("testkit: zookeeper is not running")
	}
	return syscall.Kill(pid, sig)
}

// Close kills the server (ZooKeeper needs no clean shutdown: its data is
// durable at every acknowledged write) and removes a temporary data
// directory.
func (z *ZooKeeper) Close() {
	z.mu.Lock()
	cmd, exited := z.cmd, z.exited
	z.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGCONT) // a frozen JVM cannot die
		_ = cmd.Process.Kill()
		<-exited
	}
	if z.ownsDataDir {
		_ = os.RemoveAll(z.dataDir)
	}
}
