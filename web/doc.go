// Package web is the broker's HTTP side: the listeners named by
// samsa.http.listeners and the one request multiplexer behind them.
//
// The broker's own endpoints live here: /healthz (the process answers)
// and /readyz (the broker serves: logs open, listeners up and, in cluster
// mode, registered). Everything else that speaks HTTP (Prometheus
// /metrics, the console at /, the Schema Registry and the REST proxy at
// Confluent's paths) is a handler that the wiring mounts with Handle,
// each in its own package, so this one stays a listener
// and a router.
//
// It is a top-level folder because HTTP is a separate concern from the
// Kafka protocol: netloop serves Kafka's framing on gnet, this serves
// net/http on the standard library's server, and neither knows the other.
//
// # Threading
//
// Start and Shutdown are called by one goroutine (the wiring); Handle
// and SetReady may be called from any goroutine, also while serving;
// net/http calls the handlers concurrently, one goroutine per request.
package web
