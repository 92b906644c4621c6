// Package metadata is the pure core of the metadata actor: topics,
// partitions, topic ids, dynamic configs and cluster identity (cluster id,
// broker id; this broker is the controller in single-node mode), and the
// admin requests over them.
//
// # Shape
//
// State is a plain value owned by one actor. Each handler takes a decoded
// kmsg request (and the time, where it stamps things) and returns the
// kmsg response plus Effects: partitions to open, to delete, or to
// reconfigure. The shell (package actors) carries the effects out. State
// does no I/O besides Store.Save, and takes its randomness (cluster and
// topic ids) from an io.Reader, so tests are deterministic.
//
// # Durability
//
// Every change is made on a copy of the Snapshot, saved through the
// Store, and only then installed: a failed save leaves the live state as
// it was and answers KAFKA_STORAGE_ERROR. FileStore writes the snapshot
// as JSON (FileName, in the first data directory on a fresh broker)
// through a temporary file, fsync, rename and directory fsync, so a crash
// leaves the old or the new snapshot, never a torn one. It does all its
// file access through segment/vfs (FileStore.FS, OpenFS), so the crash
// tests run it on a MemFS. Snapshot.Version
// is part of the on-disk format; a future layout bumps it and migrates.
//
// # Rules it enforces
//
//   - Topic names: 1-249 characters of [a-zA-Z0-9._-], not "." or "..";
//     a name that equals an existing one once '.' and '_' are treated
//     alike is rejected (INVALID_TOPIC_EXCEPTION).
//   - Partitions >= 1 (at most MaxPartitionsPerTopic); replication factor
//     >= 1 and at most the number of brokers (one, for now).
//   - Topic configs are checked against the config registry: unknown keys
//     and bad values are INVALID_CONFIG with a message naming the key.
//   - Dynamic broker configs follow Kafka's rules (config.CheckDynamicBroker):
//     a key Kafka cannot change at runtime is INVALID_REQUEST "Cannot update
//     these configs dynamically: Set(...)". Accepted keys samsa does not act
//     on are stored and described all the same, and named once in
//     Effects.Unapplied for the log.
//   - The config checks and merges of AlterConfigs and
//     IncrementalAlterConfigs are one pure function, AlterConfig (alter.go),
//     which the cluster-mode path (actors/catalog, over ZooKeeper) shares.
//     In cluster mode SetTopicConfigs and SetBrokerConfigs lay ZooKeeper's
//     configs over the held topics and the broker layers (hosted.go).
//   - Group configs (GROUP resources) are kept per group id in
//     Snapshot.Groups, for any id: Kafka lets a group be configured before
//     it exists. They have no effect yet (KIP-848 consumer groups use the
//     broker's group.consumer.* values).
//   - A deleted topic moves to Snapshot.Deleting in the same save that
//     removes it; its name stays reserved until the shell reports its
//     files gone (FinishDeletion, persisted), and StartAll resumes the
//     removal after a crash, so a new topic of that name never opens the
//     old files.
//   - CreatePartitions only grows a topic.
package metadata
