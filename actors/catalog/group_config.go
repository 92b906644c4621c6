package catalog

import "github.com/twmb/franz-go/pkg/kmsg"

// GroupConfig asks the metadata actor for one group config's effective
// value (share groups read share.auto.offset.reset this way); Reply is
// called on the metadata actor's goroutine, with ok false for a name
// that is no group config.
type GroupConfig struct {
	Group, Name string
	Reply       func(value string, ok bool)
}

func (a *metadataActor) groupConfig(m *GroupConfig) { m.Reply(a.state.GroupConfig(m.Group, m.Name)) }

// publishGroupConfigs publishes the routes again when an alteration
// touched a GROUP resource: the group coordinators read the groups'
// configs from them (before the answer goes out, so a client that set a
// config sees it apply from its next heartbeat on).
func (a *metadataActor) publishGroupConfigs(resources []kmsg.IncrementalAlterConfigsRequestResource) {
	for _, r := range resources {
		if r.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
			a.publish()
			return
		}
	}
}
