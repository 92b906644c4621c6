// Package bench holds load generators and the side-by-side runner against
// Apache Kafka.
package bench
