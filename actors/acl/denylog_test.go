package acl

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A denial repeated in a tight loop is logged once per window, with the
// repeats counted in its next line; another principal's denial is logged
// all the same.
func TestDenialsLoggedAtABoundedRate(t *testing.T) {
	a, out, now := loggedAuthorizer(t)
	for range 3 * denyBurst {
		a.Authorize("User:alice", "10.1.2.3:555", OpWrite, ResourceTopic, "orders")
	}
	a.Authorize("User:bob", "10.1.2.4:555", OpRead, ResourceTopic, "orders")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines logged in one window, want alice's and bob's:\n%s", len(lines), out.String())
	}
	for _, want := range []string{"principal=User:alice", "client=10.1.2.3:555", "operation=Write", "resource_type=Topic", "resource=orders"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the denial line %q lacks %s", lines[0], want)
		}
	}
	if !strings.Contains(lines[1], "principal=User:bob") || !strings.Contains(lines[1], "operation=Read") {
		t.Errorf("bob's denial line is %q", lines[1])
	}
	*now = now.Add(denyWindow)
	out.Reset()
	a.Authorize("User:alice", "10.1.2.3:555", OpWrite, ResourceTopic, "orders")
	if got := out.String(); !strings.Contains(got, "denials_not_logged="+strconv.Itoa(3*denyBurst-1)) {
		t.Errorf("the next window's first line does not count the suppressed: %q", got)
	}
	out.Reset()
	if !a.Allowed("User:alice", "10.1.2.3:555", OpWrite, ResourceTopic, "orders") && out.Len() > 0 {
		t.Errorf("Allowed logged a denial: %q", out.String())
	}
}

// Over all denials at most denyBurst lines are logged per window: a
// client probing many resources is counted, not logged, past it.
func TestDenialsOfManyResourcesBounded(t *testing.T) {
	a, out, now := loggedAuthorizer(t)
	for i := range 3 * denyBurst {
		a.Authorize("User:mallory", "10.1.2.5:555", OpDescribe, ResourceTopic, "t"+strconv.Itoa(i))
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != denyBurst {
		t.Fatalf("%d lines logged in one window, want %d", len(lines), denyBurst)
	}
	*now = now.Add(denyWindow)
	out.Reset()
	a.Authorize("User:mallory", "10.1.2.5:555", OpDescribe, ResourceTopic, "t"+strconv.Itoa(2*denyBurst))
	if got := out.String(); !strings.Contains(got, "denials_not_logged=1") {
		t.Errorf("a denial held back by the window's budget is not counted in its next line: %q", got)
	}
}

// loggedAuthorizer is an authorizer without ACLs logging to out, on a
// clock the test moves through now.
func loggedAuthorizer(t *testing.T) (a *Authorizer, out *bytes.Buffer, now *time.Time) {
	t.Helper()
	out, now = &bytes.Buffer{}, new(time.Time)
	*now = time.Unix(1000, 0)
	a, err := New(Rules{}, &MemStore{}, slog.New(slog.NewTextHandler(out, nil)), func() time.Time { return *now })
	if err != nil {
		t.Fatal(err)
	}
	return a, out, now
}
