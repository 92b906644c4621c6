// Package actors wires the broker: the actor system (protoactor-go), the
// shared environment, the metadata actor that spawns every partition
// actor, the group coordinators, the housekeeping tickers, and the router
// that hands each request to its API's handler. All broker state and
// behaviour lives in its sub-packages, one room per concern;
// docs/architecture.md draws the house (who owns what, which messages
// flow, where time and I/O enter).
//
// # Wiring (what cmd/samsa does)
//
//	cfg, _ := config.Load(inputs...)               // actors/config
//	b, _ := actors.NewBroker(cfg, logger)          // opens metadata and every log
//	srv, _ := netloop.New(netloopCfg, b)           // b is the netloop.Handler
//	srv.Start()
//	b.SetAdvertised(host, boundPort)               // before telling anyone we are ready
//	... wait for SIGTERM/SIGINT ...
//	srv.Shutdown(ctx)                              // stop accepting, finish requests in flight
//	b.Close(ctx)                                   // close every log cleanly
//
// internal/wiring (Start, Node.Stop) is that sequence in code; cmd/samsa
// and testkit.StartInProcess, the in-process broker of tests, both run it.
//
// # The rooms
//
//   - api: one file per Kafka API: its registration and the request-side
//     fan-out and merge. No state.
//   - catalog: the metadata actor (metadata.State's shell): admin APIs,
//     partition actors' lives, the routing table, producer ids.
//   - partition: one partition's pure core (high watermark, acks waiting
//     for fsync, producer state, validation) and its actor.
//   - fetch: the Fetch API: sessions and the long-polling operation.
//   - coordinator: the group coordinator actors (actors/group's shells).
//   - metadata, group, idempotence: pure cores.
//   - routing, gather, env: the routing table, the answer gather, the
//     shared environment.
//   - config: the broker and topic configuration registry.
//   - metrics: the broker's Prometheus registry (per broker) and the
//     counters the hot paths write into; internal/wiring serves it.
//   - cleaner: the log cleaner's workers (compaction of
//     cleanup.policy=compact logs; the partition actors snapshot and swap,
//     partition/actor_clean.go).
//   - replica, controller, txn, plugin: rooms for what comes
//     next (empty).
//
// # Threading
//
// Broker.Handle runs on a gnet event loop and never blocks: the API's
// handler answers directly (ApiVersions) or sends the request to the
// actor that owns it. Mailboxes are unbounded (a bounded one would block
// the loop); backpressure is netloop's, per connection. No actor ever
// waits on another (no Future.Wait or Result inside Receive): an answer
// that needs several actors is gathered (actors/gather) and sent by
// whoever fills the last slot, through req.Reply, which netloop accepts
// from any goroutine. Every actor's mailbox runs on the broker's worker
// dispatcher (dispatcher.go), which keeps grown goroutine stacks across
// runs.
//
// Requests are owned by whoever holds them; a *wire.Request's Body may
// alias its Frame. netloop reuses a frame's buffer only after the handler
// calls ReleaseFrame, which the Produce handler does once every partition
// asked has read its records (appended, so copied, or refused them:
// ProduceRequest.RecordsRead), before acks=all answers wait for the ISR;
// a partition that never finishes leaves the frame to the GC, as do
// other requests.
//
// # Supervision and durability
//
// Supervision restarts an actor from durable state, never from memory: a
// partition actor re-opens its log (partition's doc), the metadata actor
// reloads its snapshot and respawns its children (catalog's doc), a group
// coordinator reloads its __consumer_offsets partition (coordinator's
// doc). Close stops the coordinators, then poisons the metadata actor
// (queued messages first), which stops every partition actor (each closes
// its log), then closes the data directories, which write segment's
// clean-shutdown marker.
//
// Every file the broker writes goes through Options.FS (default vfs.OS),
// so a whole broker runs on a vfs.MemFS in tests and restarts from its
// crash images.
//
// # Housekeeping (housekeeping.go)
//
// Every log.retention.check.interval.ms each partition actor applies
// retention; every log.flush.offset.checkpoint.interval.ms each data
// directory writes its recovery-point and log-start-offset checkpoints.
// One goroutine owns the tickers and only sends messages.
package actors
