package zkmeta_test

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/zkmeta"
)

// One ZooKeeper serves every test of the package; each test works under
// a chroot of its own.
var shared struct {
	once sync.Once
	zk   *testkit.ZooKeeper
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.zk != nil {
		shared.zk.Close()
	}
	os.Exit(code)
}

// zkAddr is the shared server's address, started on first use.
func zkAddr(t *testing.T) string {
	t.Helper()
	testkit.Require(t, testkit.ZooKeeperAvailable(), "ZooKeeper is not installed ("+testkit.ZooKeeperJar+" and java; run `make deps`)")
	shared.once.Do(func() { shared.zk, shared.err = testkit.LaunchZooKeeper(testkit.ZooKeeperConfig{}) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.zk.Addr()
}

var (
	roots sync.Map // *testing.T -> its chroot
	runs  atomic.Int32
)

// chroot is a chroot unique to the test (and to each run of it, with
// -count); every call in one test returns the same.
func chroot(t *testing.T) string {
	if r, ok := roots.Load(t); ok {
		return r.(string)
	}
	r := strings.NewReplacer("/", "_", " ", "_", "#", "_")
	root := "/" + r.Replace(t.Name()) + "-" + strconv.Itoa(int(runs.Add(1)))
	roots.Store(t, root)
	return root
}

// connect opens a client to addr+root for the test's duration.
func connect(t *testing.T, addr, root string, mod ...func(*zkmeta.Config)) *zkmeta.Client {
	t.Helper()
	cfg := zkmeta.Config{Connect: addr + root, SessionTimeout: 2 * time.Second, ConnectionTimeout: 20 * time.Second}
	for _, m := range mod {
		m(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zkmeta.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// newClient connects to the shared server under the test's chroot.
func newClient(t *testing.T, mod ...func(*zkmeta.Config)) *zkmeta.Client {
	t.Helper()
	return connect(t, zkAddr(t), chroot(t), mod...)
}

// raw reads an absolute path through c's connection.
func raw(t *testing.T, c *zkmeta.Client, p string) ([]byte, *zk.Stat) {
	t.Helper()
	data, st, err := c.Conn().Get(c.Chroot() + p)
	if err != nil {
		t.Fatalf("get %s%s: %v", c.Chroot(), p, err)
	}
	return data, st
}

func exists(t *testing.T, c *zkmeta.Client, p string) bool {
	t.Helper()
	ok, _, err := c.Conn().Exists(c.Chroot() + p)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// fired waits for a watch channel to close.
func fired(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the watch did not fire within 20s", what)
	}
}

// notFired checks that a watch has not fired (yet).
func notFired(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: the watch fired", what)
	default:
	}
}

// nextEvent waits for the client's next session event.
func nextEvent(t *testing.T, c *zkmeta.Client, timeout time.Duration) zkmeta.SessionEvent {
	t.Helper()
	select {
	case ev, ok := <-c.Events():
		if !ok {
			t.Fatal("events closed")
		}
		return ev
	case <-time.After(timeout):
		t.Fatalf("no session event within %v", timeout)
	}
	return 0
}

// logSignal is a slog handler that sends on ch (buffered) for each
// record whose message contains substr.
type logSignal struct {
	substr string
	ch     chan struct{}
}

func newLogSignal(substr string) logSignal {
	return logSignal{substr: substr, ch: make(chan struct{}, 100)}
}

func (l logSignal) Enabled(context.Context, slog.Level) bool { return true }
func (l logSignal) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, l.substr) {
		select {
		case l.ch <- struct{}{}:
		default:
		}
	}
	return nil
}
func (l logSignal) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logSignal) WithGroup(string) slog.Handler      { return l }

func plaintext(port int32) []zkmeta.Endpoint {
	return []zkmeta.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: port, SecurityProtocol: "PLAINTEXT"}}
}

// together runs f(0) .. f(n-1) in goroutines released at once, and waits
// for them all.
func together(n int, f func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(i)
		}()
	}
	close(start)
	wg.Wait()
}
