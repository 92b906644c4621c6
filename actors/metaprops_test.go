package actors

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/segment/vfs"
)

// newBrokerOn starts a broker with broker.id id on dir in fs, or returns
// NewBroker's error.
func newBrokerOn(t *testing.T, fsys vfs.FS, dir, id string) (*Broker, error) {
	t.Helper()
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{"log.dirs": dir, "broker.id": id}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBroker(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{FS: fsys})
	if err == nil {
		t.Cleanup(func() { b.Close(t.Context()) })
	}
	return b, err
}

// A broker writes meta.properties (broker.id, cluster.id) in each data
// directory on its first start, checks it on every later one, and
// refuses a directory that belongs to another broker or cluster, or whose
// file is damaged, as Kafka does.
func TestMetaProperties(t *testing.T) {
	mem := vfs.NewMemFS()
	dir := "/data"
	b, err := newBrokerOn(t, mem, dir, "3")
	if err != nil {
		t.Fatal(err)
	}
	data, err := vfs.ReadFile(mem, filepath.Join(dir, MetaPropertiesFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseMetaProperties(data)
	if err != nil || m.brokerID != 3 || m.clusterID != b.ClusterID() || m.version != 0 {
		t.Fatalf("meta.properties %q: %+v, %v", data, m, err)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	b, err = newBrokerOn(t, mem, dir, "3")
	if err != nil {
		t.Fatalf("the same broker on its own directory: %v", err)
	}
	b.Close(t.Context())

	// Another broker's id is refused (samsa's metadata snapshot says so
	// first; meta.properties would too).
	if _, err := newBrokerOn(t, mem, dir, "4"); err == nil || !strings.Contains(err.Error(), "4") {
		t.Fatalf("broker 4 on broker 3's directory: %v", err)
	}
	// A directory with only Kafka's identity file (no samsa metadata yet)
	// of broker 3 refuses broker 4.
	kafkaDir := vfs.NewMemFS()
	if err := vfs.MkdirAllSync(kafkaDir, dir); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFileAtomic(kafkaDir, filepath.Join(dir, MetaPropertiesFile), []byte("version=0\nbroker.id=3\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := newBrokerOn(t, kafkaDir, dir, "4"); !errors.Is(err, ErrInconsistentIdentity) || !strings.Contains(err.Error(), "broker.id 4") {
		t.Fatalf("broker 4 on a directory whose meta.properties names broker 3: %v", err)
	}
	for name, content := range map[string]string{
		"another cluster":              "version=0\nbroker.id=3\ncluster.id=someone-else\n",
		"KRaft layout, another node":   "version=1\nnode.id=7\ncluster.id=x\ndirectory.id=y\n",
		"damaged":                      "version=0\nbroker.id=three\n",
		"an unknown version":           "version=9\nbroker.id=3\n",
		"not a properties file at all": "\x00\x01garbage",
	} {
		img := mem.CrashClone(nil)
		if err := vfs.WriteFileAtomic(img, filepath.Join(dir, MetaPropertiesFile), []byte(content)); err != nil {
			t.Fatal(err)
		}
		if _, err := newBrokerOn(t, img, dir, "3"); err == nil {
			t.Errorf("%s: the broker started", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
