package api

import "github.com/twmb/franz-go/pkg/kmsg"

// CreateTopics (v0-7): answered once the topics are persisted and every
// new partition actor has opened its log, so the client can use the topic
// at once. Served by the metadata actor.
var createTopics = API{Key: kmsg.CreateTopics, Handle: gated(gateCreateTopics, toMetadata)}
