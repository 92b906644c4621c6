// Package segmenttest is what the tests of segment's users (the partition
// and fetch actors) need to stand a real segment.Log up and read it back:
// a log on a temporary directory, batches of a known size appended to it,
// and the base offsets of what a read returned. segment's own tests do not
// use it (it imports segment); they have their in-package helpers.
//
// It may import what segment may (wire, and wire/batchtest for the
// batches), so any package's tests can use it.
//
// # Threading
//
// Functions only; a Log is used as any segment.Log is.
package segmenttest
