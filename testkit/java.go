package testkit

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var javaHarness struct {
	once sync.Once
	cp   string
	err  error
	out  string
}

// JavaHarness builds the Java interop harness (interop/java, a Maven
// project on Kafka's clients) once per test binary and returns its
// classpath; dir is the harness's directory relative to the test's
// package. The test is skipped without java or mvn. `mvn package`
// compiles only stale sources, so a build with nothing new is quick; the
// first on a machine downloads the clients from Maven Central.
func JavaHarness(t testing.TB, dir string) string {
	t.Helper()
	RequireTool(t, "java")
	mvn := RequireTool(t, "mvn")
	javaHarness.once.Do(func() {
		abs, err := filepath.Abs(dir)
		if err != nil {
			javaHarness.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		build := exec.CommandContext(ctx, mvn, "-q", "-B", "package", "-DskipTests")
		build.Dir = abs
		if out, err := build.CombinedOutput(); err != nil {
			javaHarness.err, javaHarness.out = err, LastLines(string(out), 40)
			return
		}
		javaHarness.cp = filepath.Join(abs, "target", "classes") + ":" + filepath.Join(abs, "target", "lib", "*")
	})
	if javaHarness.err != nil {
		t.Fatalf("building the Java harness (mvn package in %s): %v\n%s", dir, javaHarness.err, javaHarness.out)
	}
	return javaHarness.cp
}
