package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareFetch (78) acquires records of a share group's partitions for a member, under acquisition locks, and carries acknowledgements of earlier ones.
// The share coordinator actor (actors/sharegroup) serves it.
var shareFetch = API{Key: kmsg.ShareFetch, Handle: gated(gateShare, toShareCoordinator)}
