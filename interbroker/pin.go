package interbroker

import "github.com/twmb/franz-go/pkg/kmsg"

// Pinned marks a request whose version the caller chose (SetVersion before
// wrapping) and Send must keep: the controller sends LeaderAndIsr,
// UpdateMetadata and StopReplica at exactly the versions Kafka 3.9 sends,
// whatever newer version a peer advertises. kmsg keeps no "version was
// set" flag (a fresh request is at version 0, itself a valid version), so
// the mark travels as this wrapper. Send fails with ErrUnsupported when the
// peer does not accept the pinned version.
type Pinned struct{ kmsg.Request }

// Pin sets req's version to version and marks it pinned.
func Pin(req kmsg.Request, version int16) Pinned {
	req.SetVersion(version)
	return Pinned{req}
}

// unpin returns the request inside a Pinned and whether it was one.
func unpin(req kmsg.Request) (kmsg.Request, bool) {
	if p, ok := req.(Pinned); ok {
		return p.Request, true
	}
	if p, ok := req.(*Pinned); ok && p != nil {
		return p.Request, true
	}
	return req, false
}
