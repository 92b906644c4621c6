package actors

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/segment/vfs"
)

// MetaPropertiesFile is the identity file Kafka keeps in every data
// directory: which cluster the directory belongs to and which broker owns
// it. samsa writes and checks it the same way, so a directory is never
// served by the wrong broker or joined to the wrong cluster.
const MetaPropertiesFile = "meta.properties"

// ErrInconsistentIdentity is returned by NewBroker when a data directory's
// meta.properties names another broker or cluster (Kafka's
// InconsistentBrokerIdException and InconsistentClusterIdException).
var ErrInconsistentIdentity = errors.New("actors: data directory belongs to another broker or cluster")

// metaProperties is what a meta.properties says: Kafka's ZooKeeper-mode
// layout (version 0: broker.id) or KRaft's (version 1: node.id).
type metaProperties struct {
	version   int
	brokerID  int32
	clusterID string
}

// parseMetaProperties reads a Java properties file of the keys above;
// comment lines start with # or !.
func parseMetaProperties(data []byte) (metaProperties, error) {
	m := metaProperties{brokerID: -1}
	sc := bufio.NewScanner(bytes.NewReader(data))
	seen := map[string]string{}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return m, fmt.Errorf("line %q is not key=value", line)
		}
		seen[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	v, err := strconv.Atoi(seen["version"])
	if err != nil || (v != 0 && v != 1) {
		return m, fmt.Errorf("version %q: want 0 or 1", seen["version"])
	}
	m.version = v
	idKey := "broker.id"
	if v == 1 {
		idKey = "node.id"
	}
	if s, ok := seen[idKey]; ok {
		id, err := strconv.ParseInt(s, 10, 32)
		if err != nil || id < 0 {
			return m, fmt.Errorf("%s %q is not a broker id", idKey, s)
		}
		m.brokerID = int32(id)
	}
	m.clusterID = seen["cluster.id"]
	return m, nil
}

// formatMetaProperties writes the ZooKeeper-mode layout (version 0),
// which Kafka 3.9 brokers in ZooKeeper mode write and read.
func formatMetaProperties(brokerID int32, clusterID string) []byte {
	return fmt.Appendf(nil, "#\n#samsa broker identity (Kafka's meta.properties)\nversion=0\nbroker.id=%d\ncluster.id=%s\n", brokerID, clusterID)
}

// checkMetaProperties checks every data directory's meta.properties
// against this broker's id and cluster id, and writes the file where it
// is missing (atomically), as Kafka does on its first start in a
// directory.
func checkMetaProperties(fsys vfs.FS, dirs []string, brokerID int32, clusterID string) error {
	for _, d := range dirs {
		path := filepath.Join(d, MetaPropertiesFile)
		data, err := vfs.ReadFile(fsys, path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := vfs.WriteFileAtomic(fsys, path, formatMetaProperties(brokerID, clusterID)); err != nil {
				return fmt.Errorf("actors: write %s: %w", path, err)
			}
			continue
		case err != nil:
			return fmt.Errorf("actors: read %s: %w", path, err)
		}
		m, err := parseMetaProperties(data)
		if err != nil {
			return fmt.Errorf("actors: %s is damaged (%v): restore it, or remove it if this directory is this broker's", path, err)
		}
		if m.brokerID >= 0 && m.brokerID != brokerID {
			return fmt.Errorf("%w: the configured broker.id %d does not match broker.id %d stored in %s (another broker's directory?)",
				ErrInconsistentIdentity, brokerID, m.brokerID, path)
		}
		if m.clusterID != "" && m.clusterID != clusterID {
			return fmt.Errorf("%w: the cluster id %s in %s does not match this broker's cluster %s (a directory of another cluster?)",
				ErrInconsistentIdentity, m.clusterID, path, clusterID)
		}
	}
	return nil
}

// StoredBrokerID is the broker id the data directories' meta.properties
// remember (found false when none does): a cluster-mode broker without a
// configured broker.id takes it before it asks ZooKeeper for a new one,
// as Kafka does. Directories that disagree are an error.
func StoredBrokerID(fsys vfs.FS, dirs []string) (id int32, found bool, err error) {
	id = -1
	for _, d := range dirs {
		path := filepath.Join(d, MetaPropertiesFile)
		data, err := vfs.ReadFile(fsys, path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return -1, false, fmt.Errorf("actors: read %s: %w", path, err)
		}
		m, err := parseMetaProperties(data)
		if err != nil {
			return -1, false, fmt.Errorf("actors: %s is damaged (%v)", path, err)
		}
		if m.brokerID < 0 {
			continue
		}
		if found && m.brokerID != id {
			return -1, false, fmt.Errorf("%w: the data directories name broker ids %d and %d", ErrInconsistentIdentity, id, m.brokerID)
		}
		id, found = m.brokerID, true
	}
	return id, found, nil
}
