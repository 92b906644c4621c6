package actors

import cmap "github.com/orcaman/concurrent-map"

// protoactor-go keeps its process registry (every actor's PID by name) in
// 1024 concurrent maps, each split again into cmap.SHARD_COUNT (32 by
// default) locked shards: 32,768 maps and mutexes per actor system, about
// 3 MiB of pointerful memory that the garbage collector marks on every
// cycle, for a registry of a few thousand actors. Under a replicated
// produce load that memory came out of the broker's small soft memory
// limit and left the collector running back to back (docs/performance.md).
// The 1024-way split already spreads the lock traffic, so one shard per
// map is enough.
//
// It is set in an init, before any actor system (and so any registry map)
// exists: a map keeps the shard count it was made with, and a lookup
// hashes by the current one.
func init() { cmap.SHARD_COUNT = 1 }
