package api

import "github.com/twmb/franz-go/pkg/kmsg"

// AlterConfigs (v0-2, legacy): a resource's dynamic configs are replaced
// as a whole, validated, persisted, then applied to the running logs.
// Served by the metadata actor.
var alterConfigs = API{Key: kmsg.AlterConfigs, Handle: gated(gateConfigs, toMetadata)}
