package api

import "github.com/twmb/franz-go/pkg/kmsg"

// DescribeConfigs (v1-4) for topics and this broker from the config
// registry: values, sources, read-only flags, synonyms (when asked), types
// (v3+) and documentation (when asked). Served by the metadata actor.
var describeConfigs = API{Key: kmsg.DescribeConfigs, Handle: gated(gateConfigs, toMetadata)}
