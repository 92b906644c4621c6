// Package schemaregistry tests the built-in Schema Registry end to end: a
// broker started in process as `samsa serve` starts (testkit.StartInProcess) with
// samsa.http.listeners, and real clients talk to it: curl with the
// issue's own example, franz-go's pkg/sr, and confluent-kafka-python's
// SchemaRegistryClient with its Avro, JSON Schema and Protobuf
// serializers producing through the broker and consuming back.
//
// What the tests pin down:
//   - the seed's curl POST returns an id (seed_test.go);
//   - franz-go's sr client registers, looks up and fetches by id; an
//     incompatible change is refused under BACKWARD with 409 and allowed
//     under NONE (franz_test.go);
//   - a restart replays `_schemas`: the same subjects, versions and ids,
//     and new ids continue after the old ones (restart_test.go);
//   - a broker with only a SASL_PLAINTEXT listener serves the registry,
//     which logs in with the broker's own PLAIN identity (sasl_test.go);
//   - no `_schemas` topic until the first write, which creates it
//     compacted; records the registry cannot read are skipped, also on
//     replay after a restart (topic_test.go);
//   - in a three-broker cluster writes sent to any broker go to the one
//     elected writer, so concurrent registrations get distinct ids that
//     every broker serves, also after the writer stops (cluster_test.go;
//     needs ZooKeeper, as testkit's clusters do);
//   - Customer records round-trip through the Avro, JSON and Protobuf
//     serializers and deserializers with schema.registry.url pointing at
//     samsa, in Confluent's wire format (python_test.go; needs
//     interop/python/.venv, which `make interop` sets up).
package schemaregistry
