package wiring

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/actors/config"
)

// TestHTTPListenerFollowsTheBroker starts a broker with
// samsa.http.listeners and checks that /readyz says ready once it serves
// and that Stop closes the HTTP side too.
func TestHTTPListenerFollowsTheBroker(t *testing.T) {
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{
		"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": t.TempDir(), "samsa.http.listeners": "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	node, err := Start(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if node.Web == nil || len(node.Web.Addrs()) != 1 {
		t.Fatalf("no HTTP listener on the node: %+v", node.Web)
	}
	url := "http://" + node.Web.Addrs()[0].String() + "/readyz"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ready\n" {
		t.Errorf("/readyz of a started broker = %d %q", resp.StatusCode, body)
	}
	if err := node.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the HTTP listener still answers after Stop")
	}
}

func TestHTTPListenersRejectsBadAddresses(t *testing.T) {
	_, err := config.Load(config.Input{Origin: "test", Values: map[string]string{"samsa.http.listeners": "localhost"}})
	if err == nil || !strings.Contains(err.Error(), "samsa.http.listeners") {
		t.Errorf("samsa.http.listeners=localhost loaded: %v", err)
	}
}
