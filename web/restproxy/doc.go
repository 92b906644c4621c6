// Package restproxy is samsa's built-in REST proxy: the parts of
// Confluent's REST Proxy API that HTTP clients use to reach Kafka, served
// on the broker's HTTP listener at Confluent's paths.
//
//   - v3 (v3.go, produce.go): /v3/clusters, topics (list, create, get,
//     delete), partitions, and producing records with JSON, BINARY and
//     STRING data or AVRO, JSONSCHEMA and PROTOBUF data serialized
//     through the built-in Schema Registry in Confluent's wire format;
//   - v2 consumers (consumers.go): consumer instances in a group,
//     subscription, fetching records (binary, json, avro, jsonschema,
//     protobuf), committing and reading offsets, deleting the instance.
//
// It talks to the broker through franz-go clients on the broker's own
// listeners (one shared for admin and produce per user, one per consumer
// instance), so everything it does is what any Kafka client could do,
// under the same rules: a request with HTTP Basic credentials acts as
// that SASL user on a SASL_PLAINTEXT listener (auth.go), one without as
// User:ANONYMOUS on the PLAINTEXT listener. Errors are Confluent's bodies:
// {"error_code": 40403, "message": "..."}.
//
// # Threading
//
// net/http calls the handlers concurrently; the shared client is safe
// for that. Each consumer instance serves one request at a time (its own
// lock), as Confluent's does; the instance table has its own lock, and a
// reaper goroutine closes instances idle longer than the timeout.
package restproxy
