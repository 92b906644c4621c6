package zkmeta

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goldenDir holds znodes dumped from a Kafka 3.9.1 cluster: index.json
// lists {kind, path}, and <kind>.json is the znode's data; znodes/*.json
// are whole-tree dumps, lists of {path, data, ...}.
const goldenDir = "testdata/kafka-3.9.1"

var (
	brokerPathRE = regexp.MustCompile(`^/brokers/ids/(\d+)$`)
	topicPathRE  = regexp.MustCompile(`^/brokers/topics/([^/]+)$`)
	statePathRE  = regexp.MustCompile(`^/brokers/topics/[^/]+/partitions/\d+/state$`)
	configPathRE = regexp.MustCompile(`^/config/(topics|clients|users|brokers|ips)/.+$`)
)

// reencoder picks, by a znode's path, the decode-and-encode pair of its
// kind; nil for kinds without JSON (empty markers, /brokers/seqid).
func reencoder(path string) func([]byte) ([]byte, error) {
	switch {
	case brokerPathRE.MatchString(path):
		return func(data []byte) ([]byte, error) {
			b, err := DecodeBrokerInfo(1, data)
			return EncodeBrokerInfo(b), err
		}
	case topicPathRE.MatchString(path):
		return func(data []byte) ([]byte, error) {
			a, err := DecodeTopicAssignment("t", data)
			return EncodeTopicAssignment(a), err
		}
	case statePathRE.MatchString(path):
		return func(data []byte) ([]byte, error) {
			s, err := DecodePartitionState(data)
			return EncodePartitionState(s), err
		}
	case strings.HasPrefix(path, PathConfigChanges+"/"):
		return func(data []byte) ([]byte, error) {
			typ, name, err := DecodeConfigChange(data)
			return EncodeConfigChange(typ + "/" + name), err
		}
	case configPathRE.MatchString(path):
		return func(data []byte) ([]byte, error) {
			cfg, err := DecodeEntityConfig(data)
			return EncodeEntityConfig(cfg), err
		}
	case path == PathController:
		return func(data []byte) ([]byte, error) {
			ctl, err := DecodeController(data)
			return EncodeController(ctl), err
		}
	case path == PathControllerEpoch:
		return func(data []byte) ([]byte, error) {
			e, err := DecodeControllerEpoch(data)
			return EncodeControllerEpoch(e), err
		}
	case path == PathClusterID:
		return func(data []byte) ([]byte, error) {
			id, err := DecodeClusterID(data)
			return EncodeClusterID(id), err
		}
	case path == PathFeature:
		return func(data []byte) ([]byte, error) {
			f, err := DecodeFeatures(data)
			return EncodeFeatures(f), err
		}
	case path == PathProducerIDBlock:
		return func(data []byte) ([]byte, error) {
			b, err := DecodeProducerIDBlock(data)
			return EncodeProducerIDBlock(b), err
		}
	}
	return nil
}

type goldenZnode struct {
	path string
	data []byte
	from string
}

// goldenZnodes gathers the reference znodes; ok is false when there is no
// dump.
func goldenZnodes(t *testing.T) (nodes []goldenZnode, ok bool) {
	index, err := os.ReadFile(filepath.Join(goldenDir, "index.json"))
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct{ Kind, Path string }
	if err := json.Unmarshal(index, &entries); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(goldenDir, e.Kind+".json"))
		if err != nil {
			t.Errorf("%s: %v", e.Kind, err)
			continue
		}
		nodes = append(nodes, goldenZnode{e.Path, data, e.Kind + ".json"})
	}
	dumps, _ := filepath.Glob(filepath.Join(goldenDir, "znodes", "*.json"))
	for _, f := range dumps {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tree []struct{ Path, Data string }
		if err := json.Unmarshal(raw, &tree); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, n := range tree {
			nodes = append(nodes, goldenZnode{n.Path, []byte(n.Data), filepath.Base(f)})
		}
	}
	return nodes, true
}

// TestGoldenFiles decodes and re-encodes every znode of the Kafka 3.9.1
// reference dump, when it is there, and wants Kafka's bytes back.
func TestGoldenFiles(t *testing.T) {
	nodes, ok := goldenZnodes(t)
	if !ok {
		t.Skipf("no %s/index.json", goldenDir)
	}
	checked := 0
	for _, n := range nodes {
		re := reencoder(n.path)
		if re == nil || len(bytes.TrimSpace(n.data)) == 0 {
			continue
		}
		got, err := re(n.data)
		if err != nil {
			t.Errorf("%s %s: %v", n.from, n.path, err)
			continue
		}
		if configPathRE.MatchString(n.path) && sameConfig(t, got, n.data) {
			checked++ // see TestKafkaBytesRoundTrip: keys sharing a bucket
			continue
		}
		if !bytes.Equal(got, n.data) {
			t.Errorf("%s %s: re-encoded differs from Kafka 3.9.1's\n got %s\nwant %s", n.from, n.path, got, n.data)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no znode checked")
	}
	t.Logf("%d znodes re-encoded byte for byte", checked)
}
