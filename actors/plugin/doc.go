// Package plugin is the public API for plug-ins: user behaviour that runs
// inside the broker as supervised actors. A plug-in subscribes to topics
// and receives their records once committed, produces records to topics,
// may keep state in a compacted topic, and is restarted with backoff when
// it fails or panics, without disturbing the broker or other plug-ins.
// Delivery is at-least-once: a record's consumer offset is committed only
// after the plug-in handled it and everything it produced for it (output
// records and state changes) was acknowledged, so a crash redelivers
// records, never skips them.
//
// A plug-in implements Plugin (Name, Topics, Handle) and, to keep state,
// Stateful. A Host runs plug-ins; samsa.Run (package pkg/samsa) starts a
// broker with a Host so that the body of a user's main is three lines:
//
//	func main() {
//		if err := samsa.Run(samsa.Options{}, enrich.New("events", "events-enriched")); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// # How it runs
//
// Each plug-in is a Kafka client of the broker's own listener (franz-go's
// kgo, in the broker's process): a consumer group "samsa-plugin-NAME"
// reading its topics with read_committed isolation (so it sees records
// once they are committed: replicated to the in-sync replicas and, in a
// transaction, committed), and a producer for its output. This is the
// simplest sound design: offsets, rebalancing across brokers in a cluster
// (each broker's Host joins the same group and takes a share of the
// partitions), and redelivery are Kafka's own group protocol, and a
// plug-in sees exactly what any client would, through the same ACLs.
// It also means a plug-in runs unchanged against any Kafka cluster.
//
// Supervision is a restart loop of our own rather than protoactor-go's:
// a plug-in is a long poll loop around blocking client calls, not a
// mailbox of short messages, and what a restart must do (drop the
// client, rejoin the group from the last committed offsets, reload state)
// is specific to it. A panic in Handle is recovered in the plug-in's
// goroutine, the offsets of the records handled before it are committed
// (after their output is acknowledged), the client is closed, and the
// plug-in starts again after a backoff that doubles up to a cap and
// resets after a healthy run. The broker never sees the panic.
//
// # Threading
//
// A Host runs each plug-in on a goroutine of its own; Handle is called
// from that goroutine only, one record at a time, in offset order within
// a partition, so a plug-in needs no locks for its own fields. The same
// Plugin value is kept across restarts: fields it sets persist, while
// its State is reloaded from the state topic.
package plugin
