// Package security holds the end-to-end tests of the broker's security
// features against real clients and real brokers: ACLs managed with
// Kafka 3.9.1's kafka-acls.sh and franz-go's admin client, and enforced
// on producers, consumers and admin calls; SASL authentication with
// franz-go, Kafka 3.9.1's tools and kcat against in-process brokers with
// SASL_PLAINTEXT listeners (PLAIN users from JAAS, SCRAM users created
// through the Kafka APIs), alone and in a ZooKeeper cluster, failures
// checked on both sides: the client's error and the broker's one log
// line; and the SASL_SSL scenario (a PLAINTEXT operator
// listener, a SASL_SSL one with a PEM keystore from a test CA, SCRAM
// users, ACLs) on franz-go, kcat and Java kafka-clients (interop/java's
// SaslSsl, built with mvn). Between brokers: 3-broker clusters whose
// inter-broker listener is SASL_SSL (leader kill, acks=all, every record
// read back; kcat and Java against it) or SSL with client certificates,
// and a samsa broker replicating with a Kafka 3.9.1 one over SASL_SSL.
package security
