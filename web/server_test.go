package web

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func TestProbesAndMountedHandlers(t *testing.T) {
	s := New([]string{"127.0.0.1:0", "127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	s.Handle("GET /hello", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hi")) }))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	addrs := s.Addrs()
	if len(addrs) != 2 {
		t.Fatalf("bound %d addresses, want 2", len(addrs))
	}
	for _, a := range addrs {
		base := "http://" + a.String()
		if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
			t.Errorf("%s/healthz = %d %q", base, code, body)
		}
		if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "starting") {
			t.Errorf("%s/readyz before ready = %d %q, want 503 starting", base, code, body)
		}
		if code, body := get(t, base+"/hello"); code != 200 || body != "hi" {
			t.Errorf("%s/hello = %d %q", base, code, body)
		}
	}
	base := "http://" + addrs[0].String()
	s.SetReady(nil)
	if code, body := get(t, base+"/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz when ready = %d %q", code, body)
	}
	s.SetReady(errors.New("ZooKeeper session lost"))
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "ZooKeeper session lost") {
		t.Errorf("/readyz after losing readiness = %d %q", code, body)
	}
	if code, _ := get(t, base+"/nope"); code != 404 {
		t.Errorf("/nope = %d, want 404", code)
	}
}

func TestStartFailsCleanlyOnTakenPort(t *testing.T) {
	a := New([]string{"127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown(context.Background()) })
	taken := a.Addrs()[0].String()
	b := New([]string{"127.0.0.1:0", taken}, slog.New(slog.DiscardHandler))
	err := b.Start()
	if err == nil || !strings.Contains(err.Error(), "samsa.http.listeners "+taken) {
		t.Fatalf("Start on a taken port = %v, want an error naming samsa.http.listeners %s", err, taken)
	}
	if len(b.Addrs()) != 0 {
		t.Errorf("after a failed Start, %d listeners stay open", len(b.Addrs()))
	}
}
