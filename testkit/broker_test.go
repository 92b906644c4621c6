package testkit

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fakeBroker(t *testing.T, mode string, cfg BrokerConfig) (*BrokerProcess, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Binary = self
	cfg.Env = append(cfg.Env, fakeBrokerEnv+"="+mode)
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 10 * time.Second
	}
	return LaunchBroker(cfg)
}

func TestBrokerProcessLifecycle(t *testing.T) {
	b, err := fakeBroker(t, "ok", BrokerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.LogOnFailure(t)

	addr := b.Addr()
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("Addr() = %q, want a loopback address", addr)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("broker does not accept connections at %s: %v", addr, err)
	}
	conn.Close()
	if b.PID() == 0 || !b.Running() {
		t.Fatalf("PID() = %d, Running() = %v for a started broker", b.PID(), b.Running())
	}
	if b.StartupTime() <= 0 {
		t.Errorf("StartupTime() = %v", b.StartupTime())
	}
	use, err := b.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if use.RSSBytes <= 0 || use.PeakRSS < use.RSSBytes {
		t.Errorf("Usage() = %+v: want 0 < RSS <= peak", use)
	}

	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	if b.Addr() != addr {
		t.Errorf("address changed across restart: %s, then %s", addr, b.Addr())
	}
	starts, _ := os.ReadFile(filepath.Join(b.DataDir(), "starts"))
	if string(starts) != "2" {
		t.Errorf("data dir saw %q starts, want 2 (same data dir across restart)", starts)
	}

	if err := b.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if b.Running() || b.PID() != 0 {
		t.Error("broker still running after Stop")
	}
	if got := b.ExitState(); got != "exit status 0" {
		t.Errorf("ExitState() = %q", got)
	}
	if !strings.Contains(b.Output(), "fake broker: stopped") {
		t.Errorf("output not captured: %q", b.Output())
	}
	if err := b.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	dir := b.DataDir()
	b.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temporary data dir %s not removed by Close: %v", dir, err)
	}
}

func TestBrokerProcessKillAndStartAgain(t *testing.T) {
	dir := t.TempDir()
	b, err := fakeBroker(t, "ok", BrokerConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.Kill()
	if b.Running() {
		t.Fatal("running after Kill")
	}
	if got := b.ExitState(); got != "signal: killed" {
		t.Errorf("ExitState() after Kill = %q", got)
	}
	if err := b.Stop(); err != nil {
		t.Errorf("Stop after Kill: %v (a deliberate kill is not a failure)", err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a given data dir must survive Close: %v", err)
	}
}

func TestBrokerProcessStopReportsBadExit(t *testing.T) {
	b, err := fakeBroker(t, "exit3", BrokerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.Stop()
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Stop() = %v, want an error naming exit status 3", err)
	}
}

func TestBrokerProcessStartFailures(t *testing.T) {
	_, err := fakeBroker(t, "die", BrokerConfig{})
	if err == nil || !strings.Contains(err.Error(), "refusing to start") {
		t.Errorf("a broker that exits at once: err = %v, want its output in the error", err)
	}
	_, err = fakeBroker(t, "silent", BrokerConfig{ReadyTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no listening line") {
		t.Errorf("a broker that never prints its line: err = %v", err)
	}
}
