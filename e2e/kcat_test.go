package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// kcatJSON is the part of `kcat -L -J` output the test reads.
type kcatJSON struct {
	ControllerID int32 `json:"controllerid"`
	Brokers      []struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"brokers"`
	Topics []struct {
		Topic      string `json:"topic"`
		Error      string `json:"error"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Leader    int32 `json:"leader"`
			Replicas  []struct {
				ID int32 `json:"id"`
			} `json:"replicas"`
			ISRs []struct {
				ID int32 `json:"id"`
			} `json:"isrs"`
		} `json:"partitions"`
	} `json:"topics"`
}

func runKcat(t *testing.T, kcat string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, args...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kcat %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

func TestKcatMetadata(t *testing.T) {
	kcat := requireTool(t, "kcat")
	b := sharedBroker(t)
	adm := newAdmin(t, b.Addr())
	topic := topicName(t, "kcat")
	mustCreate(t, adm, topic, 3, nil)
	// Kafka publishes a new topic to its brokers asynchronously.
	eventually(t, 5*time.Second, func() error {
		if d := freshTopics(t, b.Addr(), topic)[topic]; d.Err != nil || len(d.Partitions) != 3 {
			return fmt.Errorf("%s not visible yet: %v", topic, d.Err)
		}
		return nil
	})

	t.Run("Text", func(t *testing.T) {
		out := runKcat(t, kcat, "-L", "-b", b.Addr(), "-t", topic)
		for _, want := range []string{
			"1 brokers:",
			"at " + b.Addr(),
			`topic "` + topic + `" with 3 partitions:`,
			"partition 0, leader",
			"partition 2, leader",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("kcat -L output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("JSON", func(t *testing.T) {
		out := runKcat(t, kcat, "-L", "-J", "-b", b.Addr())
		var md kcatJSON
		if err := json.Unmarshal([]byte(out), &md); err != nil {
			t.Fatalf("kcat -L -J is not JSON: %v\n%s", err, out)
		}
		if len(md.Brokers) != 1 || md.Brokers[0].Name != b.Addr() || md.ControllerID != md.Brokers[0].ID {
			t.Errorf("brokers %+v, controller %d", md.Brokers, md.ControllerID)
		}
		id := md.Brokers[0].ID
		var found bool
		for _, tp := range md.Topics {
			if tp.Topic != topic {
				continue
			}
			found = true
			if tp.Error != "" || len(tp.Partitions) != 3 {
				t.Fatalf("topic %s: error %q, %d partitions", topic, tp.Error, len(tp.Partitions))
			}
			for _, p := range tp.Partitions {
				if p.Leader != id || len(p.Replicas) != 1 || p.Replicas[0].ID != id || len(p.ISRs) != 1 || p.ISRs[0].ID != id {
					t.Errorf("partition %+v, want everything on broker %d", p, id)
				}
			}
		}
		if !found {
			t.Errorf("kcat -L -J: topic %s missing", topic)
		}
	})
}
