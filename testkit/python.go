package testkit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RunInteropPython runs interop/python/<script> with args on the Python
// of interop/python/.venv (made by `make interop` from requirements.txt)
// and returns what it printed. Without the venv it skips t, or fails it
// in CI; a failing script fails t with its stderr.
func RunInteropPython(ctx context.Context, t testing.TB, script string, args ...string) []byte {
	t.Helper()
	dir := interopPythonDir()
	python := filepath.Join(dir, ".venv", "bin", "python")
	_, err := os.Stat(python)
	Require(t, err == nil && dir != "", "interop/python/.venv is missing (make interop makes it; or python3 -m venv interop/python/.venv && "+
		"interop/python/.venv/bin/pip install -r interop/python/requirements.txt)")
	out, err := exec.CommandContext(ctx, python, append([]string{filepath.Join(dir, script)}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		stderr := ""
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("python %s: %v\n%s\n%s", script, err, out, stderr)
	}
	return out
}

// interopPythonDir finds interop/python above the working directory (a
// test runs in its package's directory), "" if there is none.
func interopPythonDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		candidate := filepath.Join(dir, "interop", "python")
		if st, err := os.Stat(candidate); err == nil && st.IsDir() {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
