// Package wiring puts a broker together: actors.NewBroker behind netloop
// listeners, advertised at the bound address, and taken down in order.
// `samsa serve` (cmd/samsa) and the in-process broker of tests
// (testkit.StartInProcess) both start brokers through it, so a test's
// broker is wired exactly as the binary's; cmd/samsa keeps the flags,
// signals and log lines, testkit the test's lifetime.
//
// It lives under internal/ because it is no API of its own: cmd/ and
// testkit/ may import everything, actors/ and netloop/ know nothing of
// each other, and this is the one place that knows both.
//
// # Threading
//
// Start and Stop are called by one goroutine; Node's Broker and Server are
// safe for concurrent use as those types are.
package wiring
