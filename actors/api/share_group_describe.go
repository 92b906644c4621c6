package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareGroupDescribe (77) describes share groups: state, epochs, members and their assignments.
// The share coordinator actor (actors/sharegroup) serves it.
var shareGroupDescribe = API{Key: kmsg.ShareGroupDescribe, Handle: gated(gateShare, toShareCoordinator)}
