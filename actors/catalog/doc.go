// Package catalog is the metadata actor: the shell around the pure
// metadata.State (topics, partitions, topic ids, dynamic configs, the
// cluster identity, persisted in samsa-metadata.json), and the owner of
// every partition actor's life.
//
// It serves the admin APIs the api package routes to it (a typed
// AdminRequest; the actor dispatches on the request body's type), feeds
// each to the core with the time, and carries out the core's Effects:
// spawning partition actors as its children (so stopping or restarting
// it closes every log first), reconfiguring them, deleting their files,
// and publishing the routing table (actors/routing) after every change.
// It also allocates producer ids in blocks persisted in every data
// directory (producer_ids.go) and creates internal topics on request
// (CreateInternalTopic: __consumer_offsets for the group coordinators).
//
// In cluster mode (cluster*.go) the admin APIs go through ZooKeeper as
// Kafka's ZooKeeper-mode admin path does (cluster_admin.go), dynamic
// configs included (cluster_configs.go: /config/topics, /config/brokers,
// checked by metadata.AlterConfig, the rules a single broker applies).
// Two goroutines outlive the actor's restarts (cluster_links.go): the
// config watch, which follows /config/changes and sends the actor each
// changed topic's or broker layer's configs (TopicConfigsChanged,
// BrokerConfigsChanged), and the producer-id blocks, which InitProducerId
// takes from the controller (AllocateProducerIds) instead of the data
// directories.
//
// Threading: one actor, so the State is only touched on its goroutine.
// It never waits: an answer that needs partition actors (new logs open,
// sizes for DescribeLogDirs, files removed for DeleteTopics) is gathered
// (actors/gather) and sent by whoever fills the last slot.
//
// Supervision: a panic while serving a request is logged with its stack,
// the request is dropped (the client times out), its children are
// stopped with their logs closed, and the restarted actor reloads the
// snapshot from disk (Load) and respawns them. A failed snapshot save
// leaves the live state untouched and answers KAFKA_STORAGE_ERROR.
// DeleteTopics records the deletion in the same save that removes the
// topic, so a crash in between resumes the removal on the next start and
// a re-created topic never finds old files.
package catalog
