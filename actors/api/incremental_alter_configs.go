package api

import "github.com/twmb/franz-go/pkg/kmsg"

// IncrementalAlterConfigs (v0-1): SET, DELETE, APPEND and SUBTRACT,
// validated, persisted, and applied live to every partition the change
// reaches. Served by the metadata actor.
var incrementalAlterConfigs = API{Key: kmsg.IncrementalAlterConfigs, Handle: gated(gateConfigs, toMetadata)}
