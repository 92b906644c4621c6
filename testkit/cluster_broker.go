package testkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-io/samsa/testkit/faultproxy"
)

// ClusterBroker is one broker of a Cluster: a child process (samsa or a
// Kafka JVM) that keeps its id, port, directory, ZooKeeper proxy and
// captured output across restarts. Methods are safe for concurrent use.
type ClusterBroker struct {
	c     *Cluster
	id    int32
	port  int
	addr  string
	extra string // the ExtraListener's host:port, if any
	dir   string
	props string
	proxy *faultproxy.Proxy
	out   *outputLog
	kind  ClusterKind // guarded by mu

	mu   sync.Mutex // serialises Start, Stop, Kill
	proc *child     // the current run; nil before the first Start
	// lastPID is the latest run's process id, read without mu (which a
	// Start holds until the broker is ready) by the inter-broker routers.
	lastPID atomic.Int64
}

func (c *Cluster) newBroker(id int32) (*ClusterBroker, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	proxy, err := faultproxy.New(c.zk.Addr())
	if err != nil {
		return nil, fmt.Errorf("testkit: %w", err)
	}
	b := &ClusterBroker{c: c, id: id, port: port, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		dir: c.brokerDir(id), proxy: proxy, out: &outputLog{tee: c.cfg.Output}, kind: c.kindOf(id)}
	b.props = filepath.Join(b.dir, "server.properties")
	extraPort := 0
	if c.cfg.ExtraListener != "" {
		if extraPort, err = FreePort(); err != nil {
			return b, err
		}
		b.extra = net.JoinHostPort("127.0.0.1", strconv.Itoa(extraPort))
	}
	if err := os.MkdirAll(filepath.Join(b.dir, "data"), 0o755); err != nil {
		return b, fmt.Errorf("testkit: %w", err)
	}
	var listeners [][2]string // the defaults' single PLAINTEXT listener
	if c.links != nil {
		internal, err := FreePort()
		if err != nil {
			return b, err
		}
		router, err := c.links.add(b, internal)
		if err != nil {
			return b, err
		}
		listeners = linkProperties(port, internal, router)
	}
	text := c.properties(id, port, extraPort, proxy.Addr()+c.cfg.Chroot, filepath.Join(b.dir, "data"), listeners)
	if err := os.WriteFile(b.props, []byte(text), 0o644); err != nil {
		return b, fmt.Errorf("testkit: %w", err)
	}
	// Written for every broker: SetKind can turn any into a Kafka broker.
	log4j := kafkaLog4j + c.cfg.Log4j + "\n"
	if err := os.WriteFile(filepath.Join(b.dir, "log4j.properties"), []byte(log4j), 0o644); err != nil {
		return b, fmt.Errorf("testkit: %w", err)
	}
	return b, nil
}

// ExtraAddr is the host:port of the broker's ExtraListener ("" without
// one).
func (b *ClusterBroker) ExtraAddr() string { return b.extra }

// ID is the broker's broker.id.
func (b *ClusterBroker) ID() int32 { return b.id }

// Addr is the broker's "127.0.0.1:port" listener, the same across
// restarts.
func (b *ClusterBroker) Addr() string { return b.addr }

// Dir is the broker's directory: server.properties, data/ (log.dirs),
// and for Kafka log4j.properties and any log files Log4j sends there.
func (b *ClusterBroker) Dir() string { return b.dir }

// DataDir is the broker's log.dirs.
func (b *ClusterBroker) DataDir() string { return filepath.Join(b.dir, "data") }

// PropertiesFile is the broker's server.properties.
func (b *ClusterBroker) PropertiesFile() string { return b.props }

// ZooKeeperProxy is the faultproxy between this broker and ZooKeeper.
func (b *ClusterBroker) ZooKeeperProxy() *faultproxy.Proxy { return b.proxy }

// Kind is what the broker runs as: samsa or Kafka 3.9.1.
func (b *ClusterBroker) Kind() ClusterKind {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.kind
}

// SetKind makes the next Start run the broker as kind, on the same
// server.properties, port and data directory: an in-place takeover of a
// Kafka broker by samsa, or the reverse. The broker must not be running.
func (b *ClusterBroker) SetKind(kind ClusterKind) error {
	if err := b.c.resolve(kind); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc.running() {
		return fmt.Errorf("testkit: broker %d is running; stop it before changing its kind", b.id)
	}
	b.kind = kind
	return nil
}

// command is the broker's command line for its kind.
func (b *ClusterBroker) command() *exec.Cmd {
	var argv []string
	switch b.kind {
	case Kafka39:
		jvm := append([]string{"-Dlog4j.configuration=file:" + filepath.Join(b.dir, "log4j.properties"),
			"-Dkafka.logs.dir=" + b.dir}, b.c.cfg.JVMOptions...)
		argv = b.c.kafka.ServerArgs(b.props, jvm...)
	default:
		argv = []string{b.c.bin, "serve", "--config", b.props}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), b.c.cfg.Env...)
	cmd.Dir = b.dir
	return cmd
}

// readyLine reports whether line is a broker of kind's "now serving"
// line.
func readyLineOf(kind ClusterKind, line string) bool {
	if kind == Kafka39 {
		return strings.Contains(line, "started (kafka.server.KafkaServer)")
	}
	return readyLine.MatchString(line)
}

// registration reads /brokers/ids/<id>'s stat; nil when absent.
func (b *ClusterBroker) registration() (*zk.Stat, error) {
	ok, st, err := b.c.conn.Exists(b.c.ZKPath(brokerIDsPath + "/" + strconv.Itoa(int(b.id))))
	if err != nil || !ok {
		return nil, err
	}
	return st, nil
}

// Start starts the broker (first start, or again after Stop or Kill) and
// waits until it is ready: it printed its ready line, accepts a TCP
// connection, and has registered in /brokers/ids with a new znode. Kafka
// 3.9 cannot start while a registration of a killed predecessor is still
// there (its session has not yet expired): it refuses to take over
// another session's ephemeral and exits. So for Kind Kafka39, Start first
// waits until that znode is gone (up to the session timeout). A samsa
// broker is started at once: waiting it out is then its own job.
func (b *ClusterBroker) Start() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc.running() {
		return fmt.Errorf("testkit: broker %d is already running", b.id)
	}
	path := b.c.ZKPath(brokerIDsPath + "/" + strconv.Itoa(int(b.id)))
	if b.kind == Kafka39 {
		err := b.c.waitZK(path+" gone (the killed broker's session expired)", func() (bool, <-chan zk.Event, error) {
			ok, _, ev, err := b.c.conn.ExistsW(path)
			return err == nil && !ok, ev, err
		})
		if err != nil {
			return err
		}
	}
	old, err := b.registration()
	if err != nil {
		return err
	}
	ready := make(chan struct{})
	kind := b.kind
	var once sync.Once
	b.out.setWatch(func(line string) {
		if readyLineOf(kind, line) {
			once.Do(func() { close(ready) })
		}
	})
	cmd := b.command()
	cmd.Stdout, cmd.Stderr = b.out, b.out
	mark := b.out.mark()
	proc, err := startChild(cmd)
	if err != nil {
		return fmt.Errorf("testkit: starting broker %d: %w", b.id, err)
	}
	b.proc = proc
	b.lastPID.Store(int64(proc.pid()))
	exited := proc.exited

	fail := func(format string, args ...any) error {
		b.proc.kill()
		return fmt.Errorf("testkit: broker %d (%s): %s; output:\n%s", b.id, b.kind,
			fmt.Sprintf(format, args...), tail(b.out.since(mark)))
	}
	deadline := time.NewTimer(b.c.cfg.ReadyTimeout)
	defer deadline.Stop()
	select {
	case <-ready:
	case <-exited:
		return fail("exited before it was ready (%s)", cmd.ProcessState)
	case <-deadline.C:
		return fail("printed no ready line within %v", b.c.cfg.ReadyTimeout)
	}
	for {
		conn, err := net.DialTimeout("tcp", b.addr, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case <-exited:
			return fail("exited before accepting a connection (%s)", cmd.ProcessState)
		case <-deadline.C:
			return fail("accepted no connection on %s within %v: %v", b.addr, b.c.cfg.ReadyTimeout, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	// Registered by this run: the znode is there and is not the one that
	// was there before the start.
	err = b.c.waitZK(path+" registered", func() (bool, <-chan zk.Event, error) {
		ok, st, ev, err := b.c.conn.ExistsW(path)
		return err == nil && ok && (old == nil || st.Czxid != old.Czxid), ev, err
	})
	if err != nil {
		return fail("%v", err)
	}
	return nil
}

// Running reports whether the broker process is alive.
func (b *ClusterBroker) Running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc.running()
}

// PID is the broker's process id, or 0 when it is not running.
func (b *ClusterBroker) PID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc.pid()
}

// Kill ends the broker with SIGKILL, as a crash would, and waits until it
// is gone. Its ZooKeeper session lives on until it times out.
func (b *ClusterBroker) Kill() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.proc.kill()
}

// Stop sends SIGTERM and waits for the broker to exit (a Kafka broker
// does its controlled shutdown first). It fails if the broker had died
// on its own, does not exit within StopTimeout (it is then killed), or
// exits unsuccessfully: samsa must exit 0; a JVM ended by SIGTERM exits
// 143, which counts as clean. Stopping a broker that was stopped or
// killed through this handle is a no-op.
func (b *ClusterBroker) Stop() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	state, err := b.proc.terminate(b.c.cfg.StopTimeout)
	switch {
	case errors.Is(err, errDiedOnItsOwn):
		return fmt.Errorf("testkit: broker %d had already exited (%s)", b.id, state)
	case errors.Is(err, errStopTimeout):
		return fmt.Errorf("testkit: broker %d did not exit within %v of SIGTERM; killed", b.id, b.c.cfg.StopTimeout)
	case err != nil:
		return fmt.Errorf("testkit: SIGTERM to broker %d: %w", b.id, err)
	}
	if state == nil || state.ExitCode() == 0 || (b.kind == Kafka39 && state.ExitCode() == 128+int(syscall.SIGTERM)) {
		return nil
	}
	return fmt.Errorf("testkit: broker %d exited with %s after SIGTERM", b.id, state)
}

// Restart stops the broker with SIGTERM (failing if it does not stop
// cleanly) and starts it again on the same port and data.
func (b *ClusterBroker) Restart() error {
	if err := b.Stop(); err != nil {
		return err
	}
	return b.Start()
}

// CutZooKeeper cuts the broker off from ZooKeeper: its connections
// through the proxy are reset and new ones refused, until HealZooKeeper.
// The session survives if the link is healed within the session timeout.
func (b *ClusterBroker) CutZooKeeper() {
	b.proxy.SetDown(true)
	b.proxy.CutAll()
}

// HealZooKeeper lets the broker reach ZooKeeper again.
func (b *ClusterBroker) HealZooKeeper() { b.proxy.SetDown(false) }

// ExpireSession makes ZooKeeper expire the broker's session: it cuts the
// broker's link and keeps it cut until the server has dropped the
// session (its /brokers/ids znode, owned by that session, is gone), then
// heals it. The broker then learns of the expiry when it reconnects; it
// is expected to open a new session and register again (WaitForBrokers
// sees it back). The broker must be registered when it is called.
func (b *ClusterBroker) ExpireSession() error {
	st, err := b.registration()
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("testkit: broker %d is not registered; no session to expire", b.id)
	}
	owner := st.EphemeralOwner
	path := b.c.ZKPath(brokerIDsPath + "/" + strconv.Itoa(int(b.id)))
	b.CutZooKeeper()
	defer b.HealZooKeeper()
	return b.c.waitZK(fmt.Sprintf("expiry of broker %d's session 0x%x", b.id, owner), func() (bool, <-chan zk.Event, error) {
		ok, st, ev, err := b.c.conn.ExistsW(path)
		return err == nil && (!ok || st.EphemeralOwner != owner), ev, err
	})
}

// Output returns what the broker printed over all its runs (the last few
// MiB).
func (b *ClusterBroker) Output() string { return b.out.String() }

// OutputMark and OutputSince let a test look at what the broker printed
// during one step.
func (b *ClusterBroker) OutputMark() int64 { return b.out.mark() }

// OutputSince returns the output printed after mark.
func (b *ClusterBroker) OutputSince(mark int64) string { return b.out.since(mark) }

// WaitOutput waits until the output after mark contains substr, or ctx
// ends.
func (b *ClusterBroker) WaitOutput(ctx context.Context, mark int64, substr string) (string, error) {
	return b.out.waitFor(ctx, mark, substr)
}

var errNotRegistered = errors.New("testkit: not registered")

// Epoch is the czxid of the broker's registration znode: Kafka's broker
// epoch, new on every registration.
func (b *ClusterBroker) Epoch() (int64, error) {
	st, err := b.registration()
	if err != nil {
		return 0, err
	}
	if st == nil {
		return 0, fmt.Errorf("broker %d: %w", b.id, errNotRegistered)
	}
	return st.Czxid, nil
}
