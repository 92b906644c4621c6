package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterShareGroupOffsets (91) moves an empty share group's start offsets; in-flight state of those partitions is dropped.
// The share coordinator actor (actors/sharegroup) serves it.
var alterShareGroupOffsets = API{Key: kmsg.AlterShareGroupOffsets, Handle: gated(gateShare, toShareCoordinator)}
