package api

import "github.com/twmb/franz-go/pkg/kmsg"

// DescribeLogDirs (v1-4): every data directory with its capacity (v4) and
// the size of each requested partition, which its partition actor
// reports. Served by the metadata actor.
var describeLogDirs = API{Key: kmsg.DescribeLogDirs, Handle: gated(gateDescribeLogDirs, toMetadata)}
