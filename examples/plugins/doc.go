// Package plugins holds example plug-ins (actors/plugin) and a broker
// binary built with them (samsa-with-plugins): router sends records to
// topics named by a header, enrich upper-cases values, stamps headers and
// counts records per key in its state topic, jsonavro converts JSON
// records to Avro against a schema. The end-to-end tests here
// run them in a real broker started with pkg/samsa, including one that
// panics on every tenth record and still delivers every record.
package plugins
