package catalog

import (
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment/vfs"
)

// Load reads the metadata snapshot from the data directories on fs (a fresh
// cluster identity on first start, ids from rand) and gives the state the
// advertised endpoint, if known.
func Load(fs vfs.FS, cfg *config.Broker, rand io.Reader, ep *metadata.Endpoint) (*metadata.State, error) {
	store, snap, err := metadata.OpenFS(fs, cfg.LogDirs)
	if err != nil {
		return nil, err
	}
	relocate(fs, snap, cfg.LogDirs)
	s, err := metadata.New(cfg, snap, store, rand)
	if err != nil {
		return nil, err
	}
	if ep != nil {
		s.SetEndpoint(*ep)
	}
	return s, nil
}

// LoadInCluster is Load for a broker of the cluster clusterID (read from
// ZooKeeper): a fresh data directory takes that id, one of another
// cluster is refused.
func LoadInCluster(fs vfs.FS, cfg *config.Broker, rand io.Reader, clusterID string) (*metadata.State, error) {
	store, snap, err := metadata.OpenFS(fs, cfg.LogDirs)
	if err != nil {
		return nil, err
	}
	relocate(fs, snap, cfg.LogDirs)
	return metadata.NewInCluster(cfg, snap, store, rand, clusterID)
}

// relocate points partitions whose recorded directory is not one of
// log.dirs (spelled differently: relative and absolute, or started from
// another working directory) at the configured directory that holds their
// files. It changes nothing on disk; a partition found nowhere is left as
// is, and metadata.New refuses to start rather than lose it.
func relocate(fs vfs.FS, snap *metadata.Snapshot, dirs []string) {
	if snap == nil {
		return
	}
	byAbs := make(map[string]string, len(dirs))
	for _, d := range dirs {
		if a, err := filepath.Abs(d); err == nil {
			byAbs[a] = d
		}
	}
	fix := func(t *metadata.Topic) {
		for i := range t.Partitions {
			p := &t.Partitions[i]
			if slices.Contains(dirs, p.Dir) {
				continue
			}
			if a, err := filepath.Abs(p.Dir); err == nil && byAbs[a] != "" {
				p.Dir = byAbs[a]
				continue
			}
			for _, d := range dirs {
				if st, err := fs.Stat(filepath.Join(d, t.Name+"-"+strconv.Itoa(int(p.Index)))); err == nil && st.IsDir {
					p.Dir = d
					break
				}
			}
		}
	}
	for i := range snap.Topics {
		fix(&snap.Topics[i])
	}
	for i := range snap.Deleting {
		fix(&snap.Deleting[i])
	}
}
