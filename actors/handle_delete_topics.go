package actors

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// handleDeleteTopics serves DeleteTopics (v1-6, by name and by topic id).
// The answer waits until every deleted partition's files are gone, so a
// client that deletes and re-creates a topic finds the name free.
func (a *metadataActor) handleDeleteTopics(req *wire.Request) {
	resp, eff := a.state.DeleteTopics(req.Body.(*kmsg.DeleteTopicsRequest))
	a.apply(eff, func() { reply(req, resp) })
}
