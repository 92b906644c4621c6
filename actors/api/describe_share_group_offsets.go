package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeShareGroupOffsets (90) lists a share group's start offsets (and
// lag, v1) per partition, from the share coordinator (actors/sharegroup).
var describeShareGroupOffsets = API{Key: kmsg.DescribeShareGroupOffsets, Handle: gated(gateShare, toShareCoordinator)}
