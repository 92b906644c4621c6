// Package segment is one partition's log on disk, in Kafka's own format.
package segment
