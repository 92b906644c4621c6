// Package schemaregistry is samsa's built-in Schema Registry: Confluent's
// REST API (subjects, versions, ids, compatibility, config, mode) served
// on the broker's HTTP listener, with Avro, JSON Schema and Protobuf
// schemas checked for compatibility before they are registered.
//
// Its state lives in a compacted `_schemas` topic in Confluent's own
// key/value JSON format (keytype SCHEMA, CONFIG, MODE, DELETE_SUBJECT,
// CLEAR_SUBJECT, NOOP; see record.go), read and written through a Kafka
// client on the broker's own listener, so a restart replays it and a
// Confluent Schema Registry pointed at samsa would read the same schemas.
//
// The pieces, one concept a file:
//   - record.go: the `_schemas` keys and values;
//   - state.go: the in-memory registry that records are applied to, the
//     pure core (no I/O), tested on its own; settings.go: the two
//     per-subject settings (compatibility level, mode);
//   - registry.go: the operations (register, look up, delete, config,
//     mode) that check against the state and append records to a Log;
//   - kafkalog.go: the Log on the `_schemas` topic (franz-go);
//   - leadership.go: in a cluster, writing only while elected and
//     forwarding writes to the elected writer otherwise (the election
//     itself is the wiring's, through ZooKeeper);
//   - avro.go, jsonschema.go, protobuf.go: parsing and compatibility per
//     schema type; compat.go: the compatibility levels;
//   - serde.go, avrojson.go: records in Confluent's wire format from and
//     to JSON, for the REST proxy (and the console);
//   - http.go: the REST handlers and Confluent's error bodies.
//
// # Threading
//
// One goroutine (the Log's reader) applies records to the state under
// its lock; HTTP handlers read it concurrently under the read lock.
// Writes are serialized by the Registry's write lock: a write checks the
// state, appends its record and returns once the reader has applied it,
// so a client that reads after its write sees it. Across brokers, only
// the elected writer writes (leadership.go).
package schemaregistry
