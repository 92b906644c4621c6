package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareAcknowledge (79) accepts, releases or rejects records a member acquired.
// The share coordinator actor (actors/sharegroup) serves it.
var shareAcknowledge = API{Key: kmsg.ShareAcknowledge, Handle: gated(gateShare, toShareCoordinator)}
