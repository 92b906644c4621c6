// Package gather is the broker's one way to wait for several actors
// without blocking any of them: a Gather has a slot per answer, each actor
// fills its own slot from its own goroutine, and whoever fills the last
// one runs the completion (usually encoding and sending a response, which
// netloop accepts from any goroutine). A deadline answers anyway if an
// actor died and its message went to dead letters.
//
// Threading: Put may be called from any goroutine, once per slot; done
// runs exactly once, on the goroutine of the last Put or the deadline
// timer's.
package gather
