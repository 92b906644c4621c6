package api

import "github.com/twmb/franz-go/pkg/kmsg"

// Metadata (v0-12): brokers (this one, at its advertised address), cluster
// id, controller (this broker), and the requested topics, auto-creating
// unknown ones when auto.create.topics.enable and the request's
// allow_auto_topic_creation (v4+) both say so. Served by the metadata
// actor.
var metadataAPI = API{Key: kmsg.Metadata, Handle: gated(gateMetadata, toMetadata)}
