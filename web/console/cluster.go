package console

import (
	"net/http"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type clusterData struct {
	ClusterID  string
	Controller int32
	Brokers    []brokerRow
	Topics     int
	Partitions int
}

type brokerRow struct {
	ID         int32
	Host       string
	Port       int32
	Rack       string
	Controller bool
	Version    string // best guess of the Kafka version from ApiVersions
	APIs       []apiRow
	Dirs       []dirRow
	VersionErr string
}

type apiRow struct {
	Name     string
	Min, Max int16
}

// clusterPage is the overview: brokers from Metadata, their API versions
// and their log directories (DescribeLogDirs).
func (c *Console) clusterPage(w http.ResponseWriter, r *http.Request, k *kafka) error {
	md, err := k.adm.Metadata(k.ctx)
	if err != nil {
		return err
	}
	d := clusterData{ClusterID: md.Cluster, Controller: md.Controller, Topics: len(md.Topics)}
	for _, t := range md.Topics {
		d.Partitions += len(t.Partitions)
	}
	versions, verr := k.adm.ApiVersions(k.ctx)
	dirs, derr := k.adm.DescribeAllLogDirs(k.ctx, nil)
	for _, b := range md.Brokers {
		row := brokerRow{ID: b.NodeID, Host: b.Host, Port: b.Port, Controller: b.NodeID == md.Controller}
		if b.Rack != nil {
			row.Rack = *b.Rack
		}
		if v, ok := versions[b.NodeID]; verr == nil && ok {
			if v.Err != nil {
				row.VersionErr = v.Err.Error()
			} else {
				row.Version = v.VersionGuess()
				v.EachKeySorted(func(key, lo, hi int16) {
					name := kmsg.NameForKey(key)
					if name == "" {
						return
					}
					row.APIs = append(row.APIs, apiRow{Name: name, Min: lo, Max: hi})
				})
			}
		} else if verr != nil {
			row.VersionErr = verr.Error()
		}
		if derr == nil {
			for _, dir := range dirs[b.NodeID] {
				dr := dirRow{Dir: dir.Dir, Size: dir.Size(), Total: dir.TotalBytes, Usable: dir.UsableBytes}
				for _, ps := range dir.Topics {
					dr.Partitions += len(ps)
				}
				if dir.Err != nil {
					dr.Err = dir.Err.Error()
				}
				row.Dirs = append(row.Dirs, dr)
			}
			slices.SortFunc(row.Dirs, func(a, b dirRow) int { return cmpString(a.Dir, b.Dir) })
		} else {
			row.Dirs = []dirRow{{Dir: "(not described)", Size: -1, Total: -1, Usable: -1, Err: derr.Error()}}
		}
		d.Brokers = append(d.Brokers, row)
	}
	c.render(w, r, http.StatusOK, "cluster", view{Title: "Cluster", Nav: "cluster", Data: d})
	return nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dirRow is one log directory of a broker.
type dirRow struct {
	Dir           string
	Size          int64
	Total, Usable int64
	Partitions    int
	Err           string
}
