package api

import "github.com/twmb/franz-go/pkg/kmsg"

// CreatePartitions (v0-3): partitions are only ever added, and each new
// one gets its actor and log. Served by the metadata actor.
var createPartitions = API{Key: kmsg.CreatePartitions, Handle: gated(gateCreatePartitions, toMetadata)}
