package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// samsaCLI runs the samsa binary with args against addr and returns
// stdout, stderr and the exit code.
func samsaCLI(t *testing.T, addr string, args ...string) (string, string, int) {
	t.Helper()
	bin, err := testkit.SamsaBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--bootstrap-server", addr, "--timeout", "10s")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func TestTopicCLI(t *testing.T) {
	b := sharedBroker(t)
	topic := topicName(t, "cli")

	out, errOut, code := samsaCLI(t, b.Addr(), "topic", "create", topic, "--partitions", "2",
		"--config", "retention.ms=600000", "--config", "cleanup.policy=compact")
	if code != 0 {
		t.Fatalf("create: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, topic) || !strings.Contains(out, "created: 2 partitions, replication factor 1") {
		t.Errorf("create output:\n%s", out)
	}

	out, errOut, code = samsaCLI(t, b.Addr(), "topic", "list")
	if code != 0 || !strings.Contains(out, "TOPIC") || !strings.Contains(out, topic) {
		t.Errorf("list: exit %d\n%s%s", code, out, errOut)
	}

	out, errOut, code = samsaCLI(t, b.Addr(), "topic", "list", "-o", "json")
	var rows []struct {
		Name              string `json:"name"`
		Partitions        int    `json:"partitions"`
		ReplicationFactor int    `json:"replication_factor"`
	}
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("list -o json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	var listed bool
	for _, r := range rows {
		if r.Name == topic {
			listed = r.Partitions == 2 && r.ReplicationFactor == 1
		}
	}
	if !listed {
		t.Errorf("list -o json: %s with 2 partitions, rf 1 missing:\n%s", topic, out)
	}

	out, errOut, code = samsaCLI(t, b.Addr(), "topic", "describe", topic)
	if code != 0 {
		t.Fatalf("describe: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"Topic: " + topic, "Partitions: 2", "retention.ms", "600000", "DYNAMIC_TOPIC_CONFIG", "PARTITION"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "segment.bytes") {
		t.Errorf("describe shows a default config without --all-configs:\n%s", out)
	}

	_, errOut, code = samsaCLI(t, b.Addr(), "topic", "alter-config", topic, "--set", "retention.ms=1000", "--delete", "cleanup.policy")
	if code != 0 {
		t.Fatalf("alter-config: exit %d\n%s", code, errOut)
	}
	out, _, _ = samsaCLI(t, b.Addr(), "topic", "describe", topic, "-o", "json")
	var views []struct {
		Partitions []struct {
			Leader int32   `json:"leader"`
			ISR    []int32 `json:"isr"`
		} `json:"partitions"`
		Configs []struct {
			Name   string `json:"name"`
			Value  string `json:"value"`
			Source string `json:"source"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(out), &views); err != nil || len(views) != 1 {
		t.Fatalf("describe -o json: %v\n%s", err, out)
	}
	configs := map[string]string{}
	for _, c := range views[0].Configs {
		configs[c.Name] = c.Value + " " + c.Source
	}
	if configs["retention.ms"] != "1000 DYNAMIC_TOPIC_CONFIG" {
		t.Errorf("after alter-config, retention.ms = %q", configs["retention.ms"])
	}
	if _, still := configs["cleanup.policy"]; still {
		t.Errorf("after --delete cleanup.policy it is still overridden: %q", configs["cleanup.policy"])
	}
	if len(views[0].Partitions) != 2 || len(views[0].Partitions[0].ISR) != 1 {
		t.Errorf("describe -o json partitions: %+v", views[0].Partitions)
	}

	// Errors: the Kafka error name and the broker's message, exit non-zero.
	_, errOut, code = samsaCLI(t, b.Addr(), "topic", "create", topic)
	if code == 0 || !strings.Contains(errOut, "TOPIC_ALREADY_EXISTS") {
		t.Errorf("create twice: exit %d, stderr %q; want TOPIC_ALREADY_EXISTS", code, errOut)
	}
	_, errOut, code = samsaCLI(t, b.Addr(), "topic", "create", topicName(t, "rf3"), "--replication-factor", "3")
	if code == 0 || !strings.Contains(errOut, "INVALID_REPLICATION_FACTOR: ") {
		t.Errorf("rf 3: exit %d, stderr %q; want INVALID_REPLICATION_FACTOR with a message", code, errOut)
	}
	out, errOut, code = samsaCLI(t, b.Addr(), "topic", "create", topicName(t, "badcfg"), "--config", "cleanup.policy=never", "-o", "json")
	if code == 0 || !strings.Contains(errOut, "INVALID_CONFIG") || !strings.Contains(out, `"error_code": 40`) {
		t.Errorf("bad config: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	_, errOut, code = samsaCLI(t, b.Addr(), "topic", "describe", topicName(t, "missing"))
	if code == 0 || !strings.Contains(errOut, "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("describe missing: exit %d, stderr %q", code, errOut)
	}

	out, errOut, code = samsaCLI(t, b.Addr(), "topic", "delete", topic)
	if code != 0 || !strings.Contains(out, "deleted") {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code = samsaCLI(t, b.Addr(), "topic", "delete", topic)
	if code == 0 || !strings.Contains(errOut, "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("delete twice: exit %d, stderr %q", code, errOut)
	}
}

func TestTopicCLINoBroker(t *testing.T) {
	port, err := testkit.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, code := samsaCLI(t, "127.0.0.1:"+itoa(port), "topic", "list")
	if code == 0 || !strings.Contains(errOut, "is a broker running") {
		t.Errorf("no broker: exit %d, stderr %q; want a hint about --bootstrap-server", code, errOut)
	}
}
