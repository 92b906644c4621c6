package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// InCI reports whether the tests run under continuous integration (the
// environment variable CI is "true" or "1"). There, `make test` has
// installed every tool the tests need, so a missing tool is a failure, not
// a reason to skip.
func InCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1"
}

// RequireTool makes t depend on an external tool: it returns the path of
// the executable name when it is on PATH; otherwise it skips t with a
// reason, or fails it when InCI (a skip there would hide a broken setup).
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	Require(t, false, name+" is not installed (run `make deps`)")
	return ""
}

// Require skips t with reason when ok is false, or fails it in CI. Use it
// for prerequisites outside Go: tools, system packages.
func Require(t testing.TB, ok bool, reason string) {
	t.Helper()
	if ok {
		return
	}
	if InCI() {
		t.Fatalf("prerequisite missing in CI: %s", reason)
	}
	t.Skipf("skipped: %s", reason)
}
