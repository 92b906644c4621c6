package testkit

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/internal/wiring"
	"github.com/samsa-io/samsa/netloop"
	"github.com/samsa-io/samsa/web"
)

// InProcess is a broker running inside the test's process: actors.NewBroker
// behind a netloop listener on a loopback port, started and stopped by
// internal/wiring exactly as `samsa serve` does. The fields are those of
// the running broker; Restart replaces them.
type InProcess struct {
	Broker *actors.Broker
	Server *netloop.Server
	// Addr is the address the broker advertises, host:port: what a
	// client dials.
	Addr string
	// Dir is the data directory (log.dirs).
	Dir string
	// Web is the broker's HTTP side (samsa.http.listeners), nil when
	// none is configured.
	Web *web.Server

	t      testing.TB
	values map[string]string
	opts   InProcessOptions
	node   *wiring.Node
}

// InProcessOptions are StartInProcessWith's seams; the zero value is
// StartInProcess's.
type InProcessOptions struct {
	// Logger receives the broker's log (default: discarded), for tests
	// that wait for a log line.
	Logger *slog.Logger
	// Handler, if set, wraps the broker as netloop's handler, for tests
	// that watch the requests it handles; it must keep the broker's
	// Drain, as embedding *actors.Broker does.
	Handler func(*actors.Broker) netloop.Handler
}

// inProcessStopTimeout bounds Close: a broker that cannot stop in it has
// a bug the test should report, not wait out.
const inProcessStopTimeout = 10 * time.Second

// StartInProcess starts a broker configured by kv (server.properties keys
// and values, in pairs) and stops it when t ends. Unless kv says
// otherwise, log.dirs is a new t.TempDir(), the listener is
// PLAINTEXT://127.0.0.1:0 (a free port) and num.network.threads is 1;
// the broker logs nothing. A bad config or a failed start fails t.
func StartInProcess(t testing.TB, kv ...string) *InProcess {
	t.Helper()
	return StartInProcessWith(t, InProcessOptions{}, kv...)
}

// StartInProcessWith is StartInProcess with opts.
func StartInProcessWith(t testing.TB, opts InProcessOptions, kv ...string) *InProcess {
	t.Helper()
	values := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "num.network.threads": "1"}
	for i := 0; i+1 < len(kv); i += 2 {
		values[kv[i]] = kv[i+1]
	}
	if values["log.dirs"] == "" {
		values["log.dirs"] = t.TempDir()
	}
	b := &InProcess{t: t, values: values, opts: opts, Dir: values["log.dirs"]}
	b.start()
	t.Cleanup(b.Close)
	return b
}

func (b *InProcess) start() {
	b.t.Helper()
	cfg, err := config.Load(config.Input{Origin: "testkit.StartInProcess", Values: b.values})
	if err != nil {
		b.t.Fatal(err)
	}
	logger := b.opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	node, err := wiring.StartWith(cfg, logger, b.opts.Handler)
	if err != nil {
		b.t.Fatalf("in-process broker: %v", err)
	}
	b.node, b.Broker, b.Server, b.Web = node, node.Broker, node.Server, node.Web
	b.Addr = net.JoinHostPort(node.Host, strconv.Itoa(int(node.Port)))
}

// Close stops the broker as SIGTERM stops `samsa serve`: listeners shut
// down, requests in flight answered, every log closed cleanly. An error
// fails the test. Closing a closed broker does nothing.
func (b *InProcess) Close() {
	if b.node == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), inProcessStopTimeout)
	defer cancel()
	if err := b.node.Stop(ctx); err != nil {
		b.t.Errorf("in-process broker stop: %v", err)
	}
	b.node = nil
}

// Restart closes the broker (if it runs) and starts it again on the same
// configuration and data directory, on a new port: Addr, Broker and
// Server change; clients made before must be made again.
func (b *InProcess) Restart() {
	b.t.Helper()
	b.Close()
	b.start()
}

// Client returns a franz-go client seeded with Addr and opts, closed when
// t ends.
func (b *InProcess) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(b.Addr)}, opts...)...)
}

// Admin returns an admin client on a Client(t, opts...), and that client.
func (b *InProcess) Admin(t testing.TB, opts ...kgo.Opt) (*kadm.Client, *kgo.Client) {
	t.Helper()
	cl := b.Client(t, opts...)
	return kadm.NewClient(cl), cl
}
