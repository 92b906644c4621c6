// Package testkit is what tests, and users' own tests, use to run samsa: an
// in-process broker or a broker process, a ZooKeeper launcher, fault
// injection and the client-compatibility runners.
package testkit
