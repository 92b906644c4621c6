// Package security holds the end-to-end tests of authentication: real
// clients (franz-go, Apache Kafka 3.9.1's tools, kcat) against in-process
// brokers with SASL_PLAINTEXT listeners, PLAIN users from JAAS and SCRAM
// users created through the Kafka APIs, alone and in a ZooKeeper
// cluster. Authentication failures are checked on both sides: the
// client's error and the broker's one log line.
package security
