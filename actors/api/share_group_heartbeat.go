package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareGroupHeartbeat (76) joins, heartbeats and leaves a share group (KIP-932); the share coordinator assigns.
// The share coordinator actor (actors/sharegroup) serves it.
var shareGroupHeartbeat = API{Key: kmsg.ShareGroupHeartbeat, Handle: gated(gateShare, toShareCoordinator)}
