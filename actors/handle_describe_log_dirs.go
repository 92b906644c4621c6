package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire"
)

// handleDescribeLogDirs serves DescribeLogDirs (v1-4): every data
// directory with its capacity (v4) and the size of each requested
// partition, which its partition actor reports. The actors answer into a
// gather; the last one in sends the response.
func (a *metadataActor) handleDescribeLogDirs(req *wire.Request) {
	body := req.Body.(*kmsg.DescribeLogDirsRequest)
	parts := a.state.LogDirPartitions(body)
	dirs := a.state.LogDirs()
	usage := make(map[string]metadata.DirUsage, len(dirs))
	for _, d := range dirs {
		usage[d] = diskUsage(d)
	}
	log := a.b.log
	g := gather.New(len(parts), a.b.opts.GatherTimeout, func(sizes []int64, timedOut bool) {
		if timedOut {
			log.Warn("DescribeLogDirs: partitions did not report in time; answering with sizes 0", "client", req.ClientAddr)
		}
		reply(req, metadata.BuildDescribeLogDirs(body, dirs, parts, sizes, usage))
	})
	for i, p := range parts {
		pid, ok := a.parts[partKey{p.ID, p.Partition}]
		if !ok {
			g.Put(i, 0)
			continue
		}
		a.ctx.Send(pid, &reportLog{g: g, slot: i})
	}
}

// diskUsage reads a directory's filesystem capacity.
func diskUsage(dir string) metadata.DirUsage {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return metadata.DirUsage{Err: err}
	}
	bs := int64(st.Bsize)
	return metadata.DirUsage{TotalBytes: int64(st.Blocks) * bs, UsableBytes: int64(st.Bavail) * bs}
}
