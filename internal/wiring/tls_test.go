package wiring

import (
	"io"
	"log/slog"
	"net"
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

// Each listener of a single-node broker advertises its own address: the
// one advertised.listeners gives it, else its bound one.
func TestListenerEndpoints(t *testing.T) {
	load := func(kv map[string]string) *config.Broker {
		t.Helper()
		cfg, err := config.Load(config.Input{Origin: "test", Values: kv})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	bound := []net.Addr{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40001}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40002}}
	eps := listenerEndpoints(load(map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"}), bound)
	if eps["PLAINTEXT"].Port != 40001 || eps["SSL"].Port != 40002 || eps["SSL"].Host != "127.0.0.1" {
		t.Fatalf("bound endpoints %v", eps)
	}
	eps = listenerEndpoints(load(map[string]string{"listeners": "PLAINTEXT://0.0.0.0:9092,SSL://0.0.0.0:9093",
		"advertised.listeners": "PLAINTEXT://a.example:19092,SSL://b.example:19093"}), bound)
	if eps["PLAINTEXT"].Host != "a.example" || eps["SSL"].Host != "b.example" || eps["SSL"].Port != 19093 {
		t.Fatalf("advertised endpoints %v", eps)
	}
	if eps := listenerEndpoints(load(map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0"}), bound); eps != nil {
		t.Fatalf("one listener: %v", eps)
	}
}
