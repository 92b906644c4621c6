// Package netloop owns sockets: gnet listeners, framing, per-connection
// in-order responses, backpressure and the sendfile writer.
package netloop
