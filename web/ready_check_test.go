package web

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
)

// A readiness check added with AddReadyCheck holds /readyz at 503 with
// its reason while it fails, and only once SetReady(nil) was called.
func TestReadyCheck(t *testing.T) {
	s := New([]string{"127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	var behind atomic.Bool
	behind.Store(true)
	s.AddReadyCheck(func() error {
		if behind.Load() {
			return errors.New("2 followed partitions are not in their ISR yet")
		}
		return nil
	})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	url := "http://" + s.Addrs()[0].String() + "/readyz"
	if code, body := get(t, url); code != 503 || body != "not ready: "+errStarting.Error()+"\n" {
		t.Errorf("before SetReady: %d %q, want the start's reason first", code, body)
	}
	s.SetReady(nil)
	if code, body := get(t, url); code != 503 || body != "not ready: 2 followed partitions are not in their ISR yet\n" {
		t.Errorf("with a failing check: %d %q", code, body)
	}
	behind.Store(false)
	if code, body := get(t, url); code != 200 || body != "ready\n" {
		t.Errorf("with the check passing: %d %q", code, body)
	}
}
