package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteShareGroupOffsets (92) makes an empty share group forget its share partitions of topics.
// The share coordinator actor (actors/sharegroup) serves it.
var deleteShareGroupOffsets = API{Key: kmsg.DeleteShareGroupOffsets, Handle: gated(gateShare, toShareCoordinator)}
