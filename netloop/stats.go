package netloop

import "sync/atomic"

// Stats is a snapshot of a Server's counters. Counts are totals since
// Start except ConnectionsOpen.
type Stats struct {
	ConnectionsOpen       int64  // connections currently open
	ConnectionsAccepted   uint64 // connections accepted (not refused)
	ConnectionsRefused    uint64 // closed at once: max.connections, max.connections.per.ip, shutting down
	ConnectionsIdleClosed uint64 // closed by connections.max.idle.ms
	AcceptErrors          uint64 // accept(2) failures (out of descriptors, typically) and connections no loop took
	ConnectionsThrottled  uint64 // refused by the ConnectionGate (over an address's connection creation rate), closed after a delay
	AcceptThrottles       uint64 // times a listener stopped accepting for a while (over a connection creation rate)
	SlotWaits             uint64 // times a listener stopped accepting at max.connections until a connection closed

	FramesRejected       uint64 // size prefix negative or above MaxRequestBytes
	RequestTimeouts      uint64 // connections closed because a request took longer than RequestReadTimeout to arrive
	Unanswered           uint64 // requests found without an answer after UnansweredAfter (each counted once)
	BudgetWaits          uint64 // times a large request waited for queued.max.request.bytes
	QueuedBytes          int64  // queued.max.request.bytes in use now
	DecodeErrors         uint64 // frames that did not decode (unknown key or version, bad header or body)
	TLSHandshakeFailures uint64 // TLS connections closed because their handshake failed (not TLS, bad or missing client certificate, timeout)
	HandlerPanics        uint64 // Handler.Handle panicked (the connection was closed)

	Requests       uint64 // requests decoded and handed to the Handler
	Responses      uint64 // responses written in full (Reply(nil) is not one)
	RepliesDropped uint64 // responses discarded because their connection had gone
	Mutes          uint64 // times a connection stopped being decoded for backpressure
	Handoffs       uint64 // replier fast-path writes the socket took only in part (the writer finished them)
	WriteWaits     uint64 // times a write found the socket full and waited for room

	BytesWritten  uint64 // every response byte put on a socket
	BytesSendfile uint64 // record data sent by sendfile(2)
	BytesCopied   uint64 // record data sent by read-and-write (no fd, or sendfile refused)

	FrameBuffersReused uint64 // large frames read into a buffer a released request gave back
}

// counters is the live, atomically updated form of Stats.
type counters struct {
	connectionsOpen       atomic.Int64
	connectionsAccepted   atomic.Uint64
	connectionsRefused    atomic.Uint64
	connectionsIdleClosed atomic.Uint64
	acceptErrors          atomic.Uint64
	connectionsThrottled  atomic.Uint64
	acceptThrottles       atomic.Uint64
	slotWaits             atomic.Uint64
	framesRejected        atomic.Uint64
	requestTimeouts       atomic.Uint64
	unanswered            atomic.Uint64
	budgetWaits           atomic.Uint64
	decodeErrors          atomic.Uint64
	tlsHandshakeFailures  atomic.Uint64
	handlerPanics         atomic.Uint64
	requests              atomic.Uint64
	responses             atomic.Uint64
	repliesDropped        atomic.Uint64
	mutes                 atomic.Uint64
	handoffs              atomic.Uint64
	writeWaits            atomic.Uint64
	bytesWritten          atomic.Uint64
	bytesSendfile         atomic.Uint64
	bytesCopied           atomic.Uint64
}

func (s *Server) snapshotStats() Stats {
	st := s.stats.snapshot()
	st.FrameBuffersReused = s.frames.reused.Load()
	st.QueuedBytes = s.queued.used.Load()
	return st
}

func (c *counters) snapshot() Stats {
	return Stats{
		ConnectionsOpen:       c.connectionsOpen.Load(),
		ConnectionsAccepted:   c.connectionsAccepted.Load(),
		ConnectionsRefused:    c.connectionsRefused.Load(),
		ConnectionsIdleClosed: c.connectionsIdleClosed.Load(),
		AcceptErrors:          c.acceptErrors.Load(),
		ConnectionsThrottled:  c.connectionsThrottled.Load(),
		AcceptThrottles:       c.acceptThrottles.Load(),
		SlotWaits:             c.slotWaits.Load(),
		FramesRejected:        c.framesRejected.Load(),
		RequestTimeouts:       c.requestTimeouts.Load(),
		Unanswered:            c.unanswered.Load(),
		BudgetWaits:           c.budgetWaits.Load(),
		DecodeErrors:          c.decodeErrors.Load(),
		TLSHandshakeFailures:  c.tlsHandshakeFailures.Load(),
		HandlerPanics:         c.handlerPanics.Load(),
		Requests:              c.requests.Load(),
		Responses:             c.responses.Load(),
		RepliesDropped:        c.repliesDropped.Load(),
		Mutes:                 c.mutes.Load(),
		Handoffs:              c.handoffs.Load(),
		WriteWaits:            c.writeWaits.Load(),
		BytesWritten:          c.bytesWritten.Load(),
		BytesSendfile:         c.bytesSendfile.Load(),
		BytesCopied:           c.bytesCopied.Load(),
	}
}
