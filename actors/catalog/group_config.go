package catalog

// GroupConfig asks the metadata actor for one group config's effective
// value (share groups read share.auto.offset.reset this way); Reply is
// called on the metadata actor's goroutine, with ok false for a name
// that is no group config.
type GroupConfig struct {
	Group, Name string
	Reply       func(value string, ok bool)
}

func (a *metadataActor) groupConfig(m *GroupConfig) { m.Reply(a.state.GroupConfig(m.Group, m.Name)) }
