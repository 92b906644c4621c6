package datapath

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// javaDir is the Maven harness, relative to this package.
const javaDir = "../../interop/java"

var javaBuild struct {
	once sync.Once
	cp   string
	err  error
	took time.Duration
}

// javaClasspath builds interop/java once per test binary (the first build
// on a machine downloads the Kafka client from Maven Central) and returns
// the classpath of the harness.
func javaClasspath(t *testing.T) string {
	t.Helper()
	testkit.RequireTool(t, "java")
	mvn := testkit.RequireTool(t, "mvn")
	javaBuild.once.Do(func() {
		dir, err := filepath.Abs(javaDir)
		if err != nil {
			javaBuild.err = err
			return
		}
		cp := filepath.Join(dir, "target", "classes") + ":" + filepath.Join(dir, "target", "lib", "*")
		if upToDate(dir) {
			javaBuild.cp = cp
			return
		}
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "package", "-DskipTests")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			javaBuild.err = &buildError{err: err, out: string(out)}
			return
		}
		javaBuild.took = time.Since(began)
		javaBuild.cp = cp
	})
	if javaBuild.err != nil {
		t.Fatalf("building the Java harness (mvn package in %s): %v", javaDir, javaBuild.err)
	}
	return javaBuild.cp
}

// upToDate reports whether the harness's build output is newer than its
// pom.xml and every source file, so the ~25 s of `mvn package` can be
// skipped.
func upToDate(dir string) bool {
	built, err := os.Stat(filepath.Join(dir, "target", "classes", "io", "samsa", "interop", "Main.class"))
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

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + testkit.LastLines(e.out, 40) }

// runJava runs the harness's Main with args and fails t unless it prints
// its OK line.
func runJava(t *testing.T, cp string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-cp", cp, "io.samsa.interop.Main"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	out := strings.TrimSpace(stdout.String())
	if err != nil || !strings.HasPrefix(out, "OK") {
		t.Fatalf("java Main %s: %v\nstdout:\n%s\nstderr (end):\n%s", strings.Join(args, " "), err, out,
			testkit.LastLines(stderr.String(), 60))
	}
	t.Logf("java %s: %s (%v)", args[0], out, time.Since(began).Round(time.Millisecond))
	return out
}

// groupAPIs are what a Java consumer in a group needs from the broker.
var groupAPIs = []int16{10, 11, 14, 12, 13, 8, 9} // FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch

// TestJavaClient produces with the Java producer (idempotent, its
// default) into one topic per codec, and reads everything back with the
// Java consumer, without a group (assign + seekToBeginning, incremental
// fetch sessions over many small fetches) and with one.
func TestJavaClient(t *testing.T) {
	cp := javaClasspath(t)
	if javaBuild.took > 0 {
		t.Logf("Java harness built in %v", javaBuild.took.Round(time.Millisecond))
	}
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	n := scaled(20_000, 2_000)
	const partitions = 3
	const size = 64
	codecs := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	var topics []string
	for _, c := range codecs {
		topic := topicName(t, "java-"+c)
		createTopic(t, b.Addr(), topic, partitions, nil)
		topics = append(topics, topic)
	}
	count := strconv.Itoa(n)
	runJava(t, cp, "produce", b.Addr(), strings.Join(topics, ","), count, strconv.Itoa(size),
		strings.Join(codecs, ","), "true")
	for i, c := range codecs {
		checkStoredCodec(t, b.Addr(), topics[i], partitions, c)
	}

	t.Run("NoGroup", func(t *testing.T) {
		// 16 KiB per partition and fetch: hundreds of fetches, all but
		// the first incremental (KIP-227).
		runJava(t, cp, "consume", b.Addr(), strings.Join(topics, ","), count, "-", "120000", "16384")
	})
	t.Run("Group", func(t *testing.T) {
		served := apiVersions(t, b.Addr())
		var missing []string
		for _, k := range groupAPIs {
			if _, ok := served[k]; !ok {
				missing = append(missing, kmsg.NameForKey(k)+" (key "+strconv.Itoa(int(k))+")")
			}
		}
		if len(missing) > 0 {
			// Consumer groups are a later issue: not a failure, even in CI.
			t.Skipf("the Java consumer in a group needs %s, which the broker does not serve yet",
				strings.Join(missing, ", "))
		}
		runJava(t, cp, "consume", b.Addr(), strings.Join(topics, ","), count, topicName(t, "group"), "120000")
	})
}
