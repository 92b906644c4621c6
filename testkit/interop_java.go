package testkit

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

var interopJavaBuild struct {
	once sync.Once
	cp   string
	err  error
}

// InteropJava returns the classpath of interop/java's harness (its
// classes and the Kafka jars Maven copied next to them), building it
// first when need be (BuildInteropJava). Without java or mvn t is
// skipped, or failed in CI.
func InteropJava(t testing.TB) string {
	t.Helper()
	RequireTool(t, "java")
	RequireTool(t, "mvn")
	interopJavaBuild.once.Do(func() {
		dir := interopDir("java")
		if dir == "" {
			interopJavaBuild.err = fmt.Errorf("interop/java is not above the working directory")
			return
		}
		interopJavaBuild.cp, interopJavaBuild.err = BuildInteropJava(dir)
	})
	if interopJavaBuild.err != nil {
		t.Fatalf("building the Java harness: %v", interopJavaBuild.err)
	}
	return interopJavaBuild.cp
}

// BuildInteropJava returns the classpath of the Java harness in dir
// (interop/java), building it with `mvn -q -B package -DskipTests` first
// when it is missing or older than its pom.xml or a source file; the
// first build on a machine downloads the Kafka client and tools from
// Maven Central. A file lock serializes the processes that ask at once
// (test packages run in parallel under `go test ./...`, and two Maven
// builds in one directory trip over each other). For programs that are
// not tests (bench/compare); tests call InteropJava.
func BuildInteropJava(dir string) (string, error) {
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("testkit: building the Java harness needs mvn: %w", err)
	}
	if err := buildInteropJava(mvn, dir); err != nil {
		return "", err
	}
	return filepath.Join(dir, "target", "classes") + string(os.PathListSeparator) + filepath.Join(dir, "target", "lib", "*"), nil
}

func buildInteropJava(mvn, dir string) error {
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "samsa-interop-java.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	if interopJavaUpToDate(dir) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "package", "-DskipTests")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mvn package in %s: %w\n%s", dir, err, LastLines(string(out), 40))
	}
	// Maven recompiles only what changed, so no class file's time says
	// when the build last ran: a stamp does.
	return os.WriteFile(filepath.Join(dir, "target", interopJavaStamp), nil, 0o644)
}

// interopJavaStamp, in target/, is written after each build.
const interopJavaStamp = ".samsa-built"

// interopJavaUpToDate reports whether the harness's build output is newer
// than its pom.xml and every source file, so the ~25 s of `mvn package`
// can be skipped.
func interopJavaUpToDate(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "target", "classes", "io", "samsa", "interop", "Main.class")); err != nil {
		return false
	}
	built, err := os.Stat(filepath.Join(dir, "target", interopJavaStamp))
	if err != nil {
		return false
	}
	if jars, _ := filepath.Glob(filepath.Join(dir, "target", "lib", "kafka-clients-*.jar")); len(jars) == 0 {
		return false
	}
	newer := false
	check := func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err != nil || info.ModTime().After(built.ModTime()) {
			newer = true
		}
		return nil
	}
	if err := filepath.WalkDir(filepath.Join(dir, "src"), check); err != nil {
		return false
	}
	if info, err := os.Stat(filepath.Join(dir, "pom.xml")); err != nil || info.ModTime().After(built.ModTime()) {
		return false
	}
	return !newer
}
