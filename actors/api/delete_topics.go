package api

import "github.com/twmb/franz-go/pkg/kmsg"

// DeleteTopics (v1-6, by name and by topic id): answered once every
// deleted partition's files are gone, so a client that deletes and
// re-creates a topic finds the name free. Served by the metadata actor.
var deleteTopics = API{Key: kmsg.DeleteTopics, Handle: gated(gateDeleteTopics, toMetadata)}
