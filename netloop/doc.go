// Package netloop owns the broker's sockets: PLAINTEXT listeners on gnet
// event loops, TLS listeners on crypto/tls (see TLS listeners), Kafka request framing and size limits, per-connection
// in-order responses, backpressure, connection limits, idle timeouts,
// graceful shutdown, and the response writer with its sendfile(2) path for
// record data. It knows nothing of what requests mean: frames are decoded
// by wire.DecodeRequest and handed to a Handler (the broker's router),
// which answers through Request.Reply.
//
// # Using it
//
//	srv, err := netloop.New(netloop.Config{Listeners: []string{"0.0.0.0:9092"}}, router)
//	err = srv.Start()             // listening when it returns
//	addrs := srv.Addrs()          // port 0 resolved
//	...
//	err = srv.Shutdown(ctx)       // drain, then close; bounded by ctx
//
// The Handler's Handle is called on a gnet loop and must not block; it
// passes the request on (to an actor) and returns. Someone later calls
// req.Reply exactly once, from any goroutine, in any order relative to
// other requests: Reply(resp) to answer, Reply(nil) for a request that has
// no response (acks=0 produce). A *wire.Response is a list of chunks,
// bytes or file regions, that together form one complete response frame
// (size prefix included, see wire.AppendResponse); resp.Done, if set, is
// called exactly once when every chunk has been written or the connection
// has gone, and releases what the chunks borrowed.
//
// # Threading model
//
// Three kinds of goroutine touch a connection.
//
// The gnet loop that owns it (Config.EventLoops of them, one per CPU by
// default; netloop accepts and hands each connection to the loop with the
// fewest, see Accepting) runs OnOpen, OnTraffic and OnClose. It reads the socket, frames,
// copies each frame out of gnet's reused buffers into a buffer the
// request owns, decodes it, assigns the connection's next sequence number
// and calls Handle. It never writes to a socket, never blocks and never
// touches a file.
//
// Any goroutine may call Reply. Reply files the response in the
// connection's reorder ring under a mutex and, if it is the next one in
// order, either writes it at once (the fast path below) or starts the
// connection's writer goroutine.
//
// A connection may have a writer goroutine, started only when a write
// cannot be made at once by whoever replied (below): file regions, large
// responses, the rest of a write the socket took only in part. It exits
// as soon as it has nothing to write, so an idle connection costs no
// goroutine (5,000 idle clients used to cost 5,000 stacks for the garbage
// collector to scan on every cycle) and one descriptor, gnet's. The
// writer makes its own dup of the socket when it starts (under the
// connection's mutex while the connection is open, when gnet's descriptor
// is known to be this connection's) and closes it as it exits; the dup is
// written with plain non-blocking system calls and is not registered with
// Go's netpoller, which would wake on every inbound packet (socket.go). A
// write that finds the socket full registers a second dup for as long as
// its batch takes and parks on it until the socket drains
// (Stats.WriteWaits counts those waits). Writes are serialized by a write
// token (conn.writing): whoever holds it is the only writer. The writer
// goroutine takes the response with the next sequence number and every
// consecutive ready one, writes their byte chunks with writev and their
// file regions with sendfile, then calls Done. A slow client, a full
// socket buffer or a cold page cache blocks only this goroutine. gnet's
// own write path is never used, so its unbounded outbound buffer stays
// empty.
//
// Fast path: handing every response to a writer goroutine costs a
// goroutine switch per response, which dominates small requests. So when
// Reply files the next response in order and the token is free, the replying goroutine (an actor, or the
// loop itself when Handle answers at once) takes the token and makes one
// non-blocking writev of the ready run of responses, if they are bytes
// only and at most 64 KiB, on gnet's own descriptor. If the socket takes
// only part (EAGAIN, a short write), the rest is handed to a writer
// goroutine, which finishes it; the replier never waits. File regions and
// larger responses always go through the writer goroutine. Done may therefore run on the replying
// goroutine, including the loop: it must be quick. While the loop decodes
// a read, replies filed meanwhile are held and flushed together when the
// read is done, so the answers to a pipelined burst leave in one writev.
//
// gnet closes its descriptor right after OnClose returns. So OnClose
// waits for a fast-path write in progress on it (one non-blocking system
// call) and marks the connection closed: nothing writes to that
// descriptor afterwards, and its number may be reused at once. A running
// writer holds its own dup, which keeps the socket open until it exits:
// OnClose breaks off a write of it waiting for room on a client that does
// not read, and the writer drops what is filed and closes the dup. After
// OnClose, netloop makes no more gnet calls for the connection:
// gnet.Conn.Wake and Close are made under the connection's mutex and only
// while it is open, since after the engine stops a stale call could reach
// a reused descriptor.
//
// An idle sweeper goroutine (connections.max.idle.ms) uses only gnet's
// concurrency-safe Conn.Close. The same sweep finds requests nobody
// answered: one still without an answer UnansweredAfter (2 minutes) after
// it was decoded is a broker bug, logged as an error once and counted in
// Stats.Unanswered, since its client and every response behind it on its
// connection wait until the client times out.
//
// # Framing and limits
//
// A request is an int32 big-endian size followed by that many bytes. The
// size is checked as soon as its 4 bytes are in: negative or above
// MaxRequestBytes (socket.request.max.bytes) closes the connection with
// one log line, before a byte of the body is buffered or allocated. A
// small frame is taken only when complete; until then its bytes wait in
// gnet's inbound buffer, however many reads it takes (one byte at a time
// is fine), and one read may carry many frames, all decoded in that
// OnTraffic. A frame of 64 KiB or more (a produce request, typically) is
// admitted as soon as its size is in: it takes its in-flight slot, gets a
// buffer of its own, and each read moves its bytes there straight from
// gnet's read buffer (assembly.go). gnet's ring would otherwise grow to the
// frame's size, copy it on every growth, and keep that memory. The buffer
// starts at 64 KiB whatever the frame announces and grows with what has
// arrived (the socket's receive queue is asked how much), so a client that
// announces 16 MiB and trickles holds what it sent. Beyond its first
// 64 KiB a frame takes its declared size from queued.max.request.bytes
// (Config.QueuedMaxRequestBytes, a budget over all connections, 256 MiB
// by default); one that does not fit waits, its connection not read, until
// another completes; one always fits when the budget is otherwise empty.
// When the budget empties after a burst (32 MiB or more) the runtime is
// asked to hand freed memory back to the OS (at most every 5 s). A request
// that has not arrived in full RequestReadTimeout after its first byte
// (30 s, the clients' own request.timeout.ms) closes its connection with
// a log line; time a connection spends held back by netloop
// (backpressure, shutdown) does not count. A connection closed mid-frame
// gives its slot and its budget back. The buffers of such frames come
// from a pool (framepool.go: best fit, at most 8 MiB idle) and go back to
// it when the handler calls Request.ReleaseFrame; a request never
// released is garbage collected. A frame that does not
// decode (unknown API key, unsupported version, malformed header or
// body) closes its connection with one log
// line naming the client's address and client id; nothing else is
// disturbed. An ApiVersions request of an unknown version decodes (KIP-511)
// and reaches the Handler like any other. A panic in Handle is recovered,
// logged, and costs only its connection.
//
// At max.connections or at its own listener.name.<l>.max.connections a
// listener waits for a slot before accepting more (slots.go);
// max.connections.per.ip (or the address's override) is checked in
// OnOpen (a TLS connection's at its start), and an extra connection is
// closed at once with a log line. All of them change live
// (SetConnectionLimits, limits.go). Connection creation rates are the ConnectionGate's
// (gate.go), asked by the accept goroutine before a connection is
// enrolled: it may hold the listener's accepting for a while, or refuse
// the connection, which is then kept unread and closed after a delay, as
// Kafka's acceptor does; no event loop waits.
//
// # Accepting
//
// netloop owns its listeners (net.Listen, one goroutine per listener
// blocked in Accept) and enrolls each accepted connection with a gnet
// client engine: event loops without listeners (accept.go). gnet's server
// engine took any accept(2) failure but a few transient ones as fatal and
// stopped, closing every connection, so a broker at its descriptor limit
// (EMFILE) lived on with a dead port. Here a failed accept is logged (at
// most every 10 s while it persists), accepting backs off (5 ms doubling
// to 500 ms, reset by the next success) and the open connections are
// served throughout. At EMFILE the pending connection is shed: a spare
// descriptor kept for the purpose is closed, the connection accepted and
// reset at once, and the spare taken again, so clients learn instead of
// waiting in the backlog. Enrolling dups the socket for gnet and closes
// Go's copy, so a connection holds two descriptors only for that moment.
//
// If the loops stop on their own (a gnet failure: an enrollment no loop
// takes within 10 s), Failed is closed and Err says why; the broker
// process exits non-zero on it rather than lingering.
//
// # Ordering
//
// Kafka clients expect responses in request order on a connection.
// Each decoded request gets the connection's next sequence number;
// Reply files the response in a ring of MaxInFlightPerConn slots at
// sequence mod size; the writer writes slot after slot in sequence order,
// so an answer that arrives early waits for those before it. Reply(nil)
// fills its slot with "nothing to write", so a request without a response
// still advances the order. A late Reply, after the connection closed, is
// dropped and its Done called. A second Reply for one request is a
// handler bug: logged, its response released, the first one stands.
//
// # Backpressure
//
// Two bounds per connection, checked before each frame is taken:
// MaxInFlightPerConn requests decoded but not yet written, and
// MaxOutboundBytes of response bytes held in memory and not yet written
// (byte chunks; file regions hold no memory and are bounded by the
// in-flight count). At either bound the connection is muted: no more
// frames are decoded, and the loop stops reading its socket. When the
// writer drains it below both bounds, it unmutes it and wakes the loop
// (gnet.Conn.Wake), which resumes reading and decodes what is buffered.
//
// gnet has no API to stop reading a socket, and without one a client that
// keeps sending while never reading its responses would grow gnet's
// inbound buffer without bound. netloop therefore switches the socket's
// registration in the loop's epoll set to EPOLLRDHUP only (and back to
// gnet's EPOLLIN|EPOLLPRI), so the kernel's receive window fills and TCP
// pushes back on the client. The loop's epoll descriptor is read by
// reflection from gnet v2.9.7's unexported fields (pause_linux.go); if a
// gnet upgrade breaks that, netloop logs it once and falls back to closing
// a muted connection whose buffered input passes MaxRequestBytes plus one
// read, and TestBackpressureClientNeverReads fails. Memory per connection
// is then bounded by one partial frame, one read buffer of spill, the
// in-flight responses and the socket buffers.
//
// # Sendfile
//
// A file chunk (wire.Chunk with File set) whose File.SysFd reports a
// descriptor is sent with sendfile(2) from the writer goroutine on the
// socket dup; EAGAIN parks the goroutine in Go's netpoller until the
// socket is writable, as for writev. The offset is explicit (sendfile's offset argument), never
// the file's shared position, so any number of connections may send from
// one open segment file at once; TCPConn.ReadFrom would use and advance
// the shared position. Stats.BytesSendfile counts what went this way.
//
// Caveats:
//   - The descriptor must stay open, and the region's bytes unchanged,
//     until Done: the segment owner holds a reference per response and
//     drops it in Done (retention and compaction wait for it).
//   - A region past the end of the file (the file was truncated) breaks
//     the response mid-frame: the connection is closed.
//   - A cold page cache makes sendfile block on disk; that blocks only
//     the connection's writer goroutine (the runtime hands its P to
//     another thread), never a loop.
//   - While a connection's writer runs it holds one extra descriptor
//     (two while a write waits for room) and a goroutine; an idle
//     connection holds neither.
//   - sendfile never applies to TLS (see TLS listeners). Files without a
//     descriptor, kernels that refuse sendfile for a file (EINVAL, ENOSYS,
//     EOPNOTSUPP) and non-Linux builds take the copying path: ReadAt into
//     a pooled 64 KiB buffer, then Write (Stats.BytesCopied).
//   - writev comes from golang.org/x/sys on Linux, macOS and OpenBSD and
//     from its system call number on FreeBSD, NetBSD and DragonFly
//     (writev_bsd.go), so the broker builds for FreeBSD too; its tests
//     run on Linux only.
//
// # TLS listeners
//
// gnet has no TLS, and crypto/tls wants a net.Conn it can block on. So a
// listener with a TLSListener (Config.TLS) hands its connections not to
// gnet but to two goroutines each (tlsconn.go, tlswrite.go): a reader
// that makes the handshake, sets the principal from a verified client
// certificate (TLSListener.Principal) before the first request is read,
// then reads frames through a buffered reader; and a writer that writes
// the responses in order. Driving crypto/tls from the gnet loops instead
// (feeding it the loop's bytes through an in-memory net.Conn) would keep
// one descriptor and no goroutine per idle connection, but it puts
// handshakes and encryption on the loops, where they would stall every
// plaintext connection of the loop, and it is much more code to get
// right. TLS connections are fewer and cost their encryption anyway; a
// goroutine pair (about 16 KiB of stacks and the reader's 16 KiB buffer)
// is small beside that. The plaintext path is unchanged: the only TLS
// branch on it is one per accepted connection.
//
// What is shared with gnet connections: the framing and its limits
// (MaxRequestBytes, checked on the size prefix before any body is read),
// wire.DecodeRequest and the Handler, the reorder ring (one slot type,
// Reply in any order, Reply(nil), a second Reply logged), large frames
// read into pooled buffers with queued.max.request.bytes taken as on gnet
// connections (past their first 64 KiB; a frame waiting for budget is
// not read), max.connections(.per.ip), the Stats counters, and Shutdown
// (decoding stops, requests in flight are answered and written, then the
// connections are closed and their goroutines waited for). What differs,
// because the goroutines block:
//
//   - Backpressure: at MaxInFlightPerConn or MaxOutboundBytes the reader
//     waits (on the connection's condition variable) instead of reading,
//     so the socket is not read and TCP pushes back on the client.
//   - Writes: Reply only files the response and wakes the writer; the
//     replier never writes, so it never waits on a TLS socket. The
//     writer gathers byte chunks into 64 KiB (full TLS records) and
//     copies file regions: ReadAt at the region's own offset into a
//     pooled 64 KiB buffer, then through crypto/tls
//     (Stats.BytesCopied). sendfile(2) cannot encrypt, so fetch data
//     costs a copy and the encryption on TLS.
//   - Timeouts: the reader's read deadlines carry connections.max.idle.ms
//     (a deadline that finds traffic since, or requests in flight, is
//     moved on) and RequestReadTimeout (from a frame's first byte, and
//     again from its admission, so time held back by netloop does not
//     count). A handshake must finish within RequestReadTimeout (its
//     default when disabled). The idle sweeper visits TLS connections
//     only for the check for unanswered requests.
//   - A failed handshake (a plaintext client on a TLS port, a missing or
//     untrusted client certificate, garbage) closes the connection with
//     one log line and counts Stats.TLSHandshakeFailures; nothing reaches
//     the Handler.
//
// # Shutdown
//
// Shutdown(ctx): close the listeners (new connections are refused) and
// stop decoding; tell a Handler that implements Drainer to answer what it
// holds back (parked fetches); wait until every decoded request has been
// answered and its response written or dropped; stop the event loops,
// which call OnClose for every connection; wait for the writers to exit.
// ctx bounds the whole; when it expires the connections are closed anyway
// and ctx's error is returned.
//
// # Busy time
//
// LoopBusy sums the time the event loops spent in OnTraffic (reading,
// decoding, calling the Handler), for the broker's busy ratio metric:
// each connection counts its own in an atomic only its loop writes, and
// a closing connection folds its count into the server's (busy.go).
// Requests carry when they were decoded (wire.Request.Decoded), the start
// of their queue time. TLS connections' reader goroutines are not loops
// and are not counted.
//
// # Port 0
//
// Start binds every listener itself before any loop runs, so port 0 is
// resolved when Start returns (Addrs).
package netloop
