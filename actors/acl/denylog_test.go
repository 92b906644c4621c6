package acl

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDenialsLoggedAtABoundedRate(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1000, 0)
	a, err := New(Rules{}, &MemStore{}, slog.New(slog.NewTextHandler(&out, nil)), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	for range 3 * denyBurst {
		a.Authorize("User:alice", "10.1.2.3:555", OpWrite, ResourceTopic, "orders")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != denyBurst {
		t.Fatalf("%d lines logged in one window, want %d", len(lines), denyBurst)
	}
	for _, want := range []string{"principal=User:alice", "client=10.1.2.3:555", "operation=Write", "resource_type=Topic", "resource=orders"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the denial line %q lacks %s", lines[0], want)
		}
	}
	now = now.Add(denyWindow)
	out.Reset()
	a.Authorize("User:alice", "10.1.2.3:555", OpWrite, ResourceTopic, "orders")
	if got := out.String(); !strings.Contains(got, "denials_not_logged="+strconv.Itoa(2*denyBurst)) {
		t.Errorf("the next window's first line does not count the suppressed: %q", got)
	}
	out.Reset()
	if !a.Allowed("User:alice", "10.1.2.3:555", OpWrite, ResourceTopic, "orders") && out.Len() > 0 {
		t.Errorf("Allowed logged a denial: %q", out.String())
	}
}
