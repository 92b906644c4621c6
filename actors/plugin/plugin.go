package plugin

import "github.com/twmb/franz-go/pkg/kgo"

// Plugin is behaviour run inside the broker.
type Plugin interface {
	// Name identifies the plug-in: its consumer group is
	// "samsa-plugin-NAME", its state topic "samsa-plugin-NAME-state". It
	// must be unique in a Host and stable across restarts of the broker,
	// or the plug-in starts again from its topics' beginning.
	Name() string
	// Topics are the topics whose committed records Handle receives.
	Topics() []string
	// Handle processes one record. Returning an error or panicking
	// restarts the plug-in (after a backoff) and delivers this record
	// again; records before it, with everything produced for them, are
	// kept. Handle may be called again for a record it already handled
	// (at-least-once), so its effects should tolerate repetition.
	Handle(c *Context, r *kgo.Record) error
}

// Stateful is a Plugin that keeps state (Context.State) in a compacted
// topic, loaded in full before the first record of each run.
type Stateful interface {
	Plugin
	// KeepsState reports whether the plug-in uses Context.State.
	KeepsState() bool
}

// Opener is a Plugin that prepares each run, after its state is loaded
// and before its first record (for example to rebuild a cache from
// State).
type Opener interface {
	Plugin
	Open(c *Context) error
}

// GroupID is the consumer group of the plug-in named name.
func GroupID(name string) string { return "samsa-plugin-" + name }

// StateTopic is the compacted topic holding the state of the plug-in
// named name.
func StateTopic(name string) string { return "samsa-plugin-" + name + "-state" }
