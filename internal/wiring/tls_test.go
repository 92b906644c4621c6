package wiring

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/actors/config"
)

// A keystore that cannot be read stops the start with an error naming
// the key (the listener override when that is where it was set) and the
// file; a broker without SSL listeners gets no TLS configuration at all.
func TestTLSListenerErrorsAtStart(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{
		"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"log.dirs":  t.TempDir(),
		"listener.name.ssl.ssl.keystore.location": "/nonexistent/broker.p12",
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(cfg, logger)
	if err == nil || !strings.Contains(err.Error(), "listener.name.ssl.ssl.keystore.location=/nonexistent/broker.p12") ||
		!strings.Contains(err.Error(), "listener SSL") {
		t.Fatalf("err = %v", err)
	}
	plain, err := config.Load(config.Input{Origin: "test", Values: map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	if tl, _, err := tlsListeners(plain, logger); tl != nil || err != nil {
		t.Fatalf("a PLAINTEXT broker got TLS listeners %v, %v", tl, err)
	}
}
