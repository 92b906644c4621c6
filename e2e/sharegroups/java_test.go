package sharegroups

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// shareBroker starts a broker with short acquisition locks (1 s) and a
// delivery limit of 2, so redelivery and archiving happen quickly.
func shareBroker(t *testing.T, dir string) *testkit.BrokerProcess {
	t.Helper()
	return testkit.StartBroker(t, testkit.BrokerConfig{DataDir: dir, Args: []string{
		"--group.share.record.lock.duration.ms", "1000",
		"--group.share.min.record.lock.duration.ms", "1000",
		"--group.share.delivery.count.limit", "2",
	}})
}

func createTopic(t *testing.T, addr, topic string, partitions int32) {
	t.Helper()
	adm := kadm.NewClient(testkit.NewClient(t, kgo.SeedBrokers(addr)))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := adm.CreateTopics(ctx, partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
}

// share runs one ShareGroups mode and fails t unless it prints OK.
func share(t *testing.T, cp string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-Xmx256m", "-cp", cp, "io.samsa.interop.ShareGroups"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	out := strings.TrimSpace(stdout.String())
	if err != nil || !strings.HasPrefix(out, "OK") {
		t.Fatalf("ShareGroups %s: %v\nstdout:\n%s\nstderr (end):\n%s", strings.Join(args, " "), err, out, testkit.LastLines(stderr.String(), 60))
	}
	t.Logf("ShareGroups %s: %s (%v)", args[0], out, time.Since(began).Round(time.Millisecond))
}

func TestJavaShareConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	cp := testkit.InteropJava(t)
	b := shareBroker(t, t.TempDir())
	t.Run("AllOnce", func(t *testing.T) {
		createTopic(t, b.Addr(), "share-all", 3)
		share(t, cp, "all", b.Addr(), "share-all", "g-all", "300")
	})
	t.Run("Release", func(t *testing.T) {
		createTopic(t, b.Addr(), "share-release", 1)
		share(t, cp, "release", b.Addr(), "share-release", "g-release")
	})
	t.Run("LockTimeout", func(t *testing.T) {
		createTopic(t, b.Addr(), "share-timeout", 1)
		share(t, cp, "timeout", b.Addr(), "share-timeout", "g-timeout")
	})
	t.Run("RejectAndLimit", func(t *testing.T) {
		createTopic(t, b.Addr(), "share-limit", 1)
		share(t, cp, "limit", b.Addr(), "share-limit", "g-limit")
	})
}

// TestJavaShareRestart: acknowledgements made before a restart hold
// after it (the state is in __share_group_state); then Java's Admin
// describes the group and lists, alters and deletes its offsets.
func TestJavaShareRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	cp := testkit.InteropJava(t)
	b := shareBroker(t, t.TempDir())
	createTopic(t, b.Addr(), "share-restart", 1)
	const n = 20
	share(t, cp, "accept", b.Addr(), "share-restart", "g-restart", strconv.Itoa(n))
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	share(t, cp, "after", b.Addr(), "share-restart", "g-restart", strconv.Itoa(n))
	// The group is empty now and its partition starts at n+2: Java's
	// Admin share-group calls.
	share(t, cp, "admin", b.Addr(), "share-restart", "g-restart", strconv.Itoa(n+2))
}
