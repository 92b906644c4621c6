// Package security holds the end-to-end tests of the broker's security
// features against real clients and a real broker process: ACLs managed
// with Kafka 3.9.1's kafka-acls.sh and franz-go's admin client, and
// enforced on producers, consumers and admin calls.
package security
