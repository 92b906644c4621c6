package console

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/internal/wiring"
)

// consoleBroker is a broker with its HTTP side on.
type consoleBroker struct {
	node  *wiring.Node
	base  string // http://host:port of the console
	kafka string // the first Kafka listener's address
}

// startBroker starts a broker on loopback with samsa.http.listeners and
// kv (server.properties pairs) and stops it when t ends.
func startBroker(t *testing.T, kv ...string) *consoleBroker {
	t.Helper()
	values := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": t.TempDir(),
		"samsa.http.listeners": "127.0.0.1:0", "num.network.threads": "1", "group.initial.rebalance.delay.ms": "0"}
	for i := 0; i+1 < len(kv); i += 2 {
		values[kv[i]] = kv[i+1]
	}
	cfg, err := config.Load(config.Input{Origin: "e2e/console", Values: values})
	if err != nil {
		t.Fatal(err)
	}
	node, err := wiring.Start(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := node.Stop(ctx); err != nil {
			t.Errorf("stopping the broker: %v", err)
		}
	})
	return &consoleBroker{node: node, base: "http://" + node.Web.Addrs()[0].String(), kafka: node.Server.Addrs()[0].String()}
}

func (b *consoleBroker) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.kafka)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func (b *consoleBroker) admin(t *testing.T) *kadm.Client { return kadm.NewClient(b.client(t)) }

// chromiumPath finds Debian's chromium (installed by make deps).
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts a headless Chromium for t; the test is skipped, saying
// why, when none is installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("no chromium binary on PATH: run `make deps` (scripts/install-deps.sh installs Debian's chromium) to run the console's browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// browserTimeout bounds one step of a browser test.
const browserTimeout = 30 * time.Second

// run runs browser steps within a deadline, failing t with what was
// being done.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, browserTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs one browser action that returns a value.
func get[T any](t *testing.T, ctx context.Context, what string, action chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, browserTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// screenshot saves the page as name.png into $SAMSA_CONSOLE_SCREENSHOTS,
// when set (docs/console.md shows them).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("SAMSA_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	png := get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitText polls until the element's text is want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	js := `(() => { const e = document.querySelector(` + strconv.Quote(sel) + `); return e !== null && e.textContent.trim() === ` + strconv.Quote(want) + `; })()`
	deadline := time.Now().Add(browserTimeout)
	for {
		pctx, cancel := context.WithDeadline(ctx, deadline)
		_, err := chromedp.Run(pctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond)))
		cancel()
		if err == nil {
			return
		}
		// A form's submission navigates while the poll runs, which ends
		// it with an error about the old page; poll the new one.
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s to read %q: %v", sel, want, err)
		}
	}
}

// httpClient is a cookie-keeping client that does not follow redirects,
// so tests see where the console sends them.
func httpClient(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
