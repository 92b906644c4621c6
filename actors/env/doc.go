// Package env is the environment every actor shell and API handler of
// the broker shares, passed as one value instead of a back-pointer to the
// broker: the clock, the logger, the configuration, the actor system's
// root (to send from outside an actor and to spawn), the routing table,
// the advertised endpoint, and the one helper that answers a request.
//
// The broker builds one Env at start and hands the same pointer to
// everything; its fields are set before any actor runs and never change
// after, except through their own atomics (Routes, Endpoint).
package env
