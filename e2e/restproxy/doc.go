// Package restproxy tests the built-in REST proxy end to end with plain
// HTTP requests (what curl sends) against an in-process broker with
// samsa.http.listeners, checking what lands in Kafka with franz-go:
//
//   - v3 clusters, topics (create, list, get, delete) and partitions,
//     with Confluent's error bodies for unknown and duplicate topics
//     (v3_test.go);
//   - v3 produce of JSON, BINARY and STRING data to a chosen partition,
//     the bytes read back exactly, and AVRO through the registry in
//     Confluent's wire format (produce_test.go);
//   - the v2 consumer API: instance, subscription, records in json and
//     avro, offsets committed and read back, the instance deleted
//     (consumers_test.go);
//   - with a SASL listener and an ACL authorizer, requests act as their
//     HTTP Basic user: anonymous writes are 403, a wrong password 401,
//     alice writes once granted, her consumer instance is hers
//     (auth_test.go);
//   - a Python client (httpx, interop/python/rest_proxy.py) doing all of
//     that, its committed offset checked on the broker (python_test.go;
//     needs interop/python/.venv).
package restproxy
