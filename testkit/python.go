package testkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// RunInteropPython runs interop/python/<script> with args on the Python
// of interop/python/.venv and returns what it printed. The venv is made
// (or brought up to date) from requirements.txt first, as `make
// interop` does; where that cannot be done (no python3 with venv, no
// package index) t is skipped, or failed in CI. A failing script fails t
// with its stderr.
func RunInteropPython(ctx context.Context, t testing.TB, script string, args ...string) []byte {
	t.Helper()
	python := InteropPython(ctx, t)
	dir := filepath.Dir(filepath.Dir(filepath.Dir(python)))
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

// InteropPython is the interpreter of interop/python/.venv, made (or
// brought up to date) from requirements.txt first; where that cannot be
// done t is skipped, or failed in CI.
func InteropPython(ctx context.Context, t testing.TB) string {
	t.Helper()
	dir := interopPythonDir()
	Require(t, dir != "", "interop/python is not above the working directory")
	err := ensureInteropVenv(ctx, dir)
	Require(t, err == nil, fmt.Sprintf("interop/python/.venv cannot be made: %v", err))
	return filepath.Join(dir, ".venv", "bin", "python")
}

// ensureInteropVenv makes dir/.venv and installs requirements.txt into
// it unless the stamp .venv/installed (e2e/interop's too) is newer. A
// file lock serializes test packages running at once.
func ensureInteropVenv(ctx context.Context, dir string) error {
	venv := filepath.Join(dir, ".venv")
	if err := os.MkdirAll(venv, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(venv, ".setup.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	stamp := filepath.Join(venv, "installed")
	if st, err := os.Stat(stamp); err == nil {
		if req, err := os.Stat(filepath.Join(dir, "requirements.txt")); err == nil && !req.ModTime().After(st.ModTime()) {
			return nil
		}
	}
	run := func(name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %v: %w: %s", name, args, err, out)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(venv, "bin", "python")); err != nil {
		if err := run("python3", "-m", "venv", ".venv"); err != nil {
			return err
		}
	}
	if err := run(filepath.Join(venv, "bin", "pip"), "install", "-q", "-r", "requirements.txt"); err != nil {
		return err
	}
	return os.WriteFile(stamp, nil, 0o644)
}

// interopPythonDir finds interop/python above the working directory (a
// test runs in its package's directory), "" if there is none.
func interopPythonDir() string { return interopDir("python") }

// interopDir is interop/<name> in the nearest directory above the
// working directory that has it, or "".
func interopDir(name string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		candidate := filepath.Join(dir, "interop", name)
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
