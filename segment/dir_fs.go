package segment

import "github.com/samsa-io/samsa/segment/vfs"

// FS is the filesystem the directory's logs live on (Options.FS), for
// the files a partition keeps beside its log (producer-state snapshots).
func (d *Dir) FS() vfs.FS { return d.fs }
