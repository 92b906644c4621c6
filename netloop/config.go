package netloop

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"
)

// Defaults, named after the Kafka broker settings they mirror.
const (
	// DefaultListener is where a broker listens when Config.Listeners is empty.
	DefaultListener = "127.0.0.1:9092"
	// DefaultMaxRequestBytes is socket.request.max.bytes (100 MiB).
	DefaultMaxRequestBytes = 100 << 20
	// DefaultMaxInFlightPerConn is how many requests of one connection may
	// be decoded and not yet answered before that connection stops being
	// decoded. Kafka has no such setting (it serves one request at a time per
	// connection); 16 leaves room above the clients' usual
	// max.in.flight.requests.per.connection of 5.
	DefaultMaxInFlightPerConn = 16
	// DefaultMaxOutboundBytes is the per-connection high-water mark of
	// response bytes held in memory and not yet written.
	DefaultMaxOutboundBytes = 4 << 20
	// DefaultConnectionsMaxIdle is connections.max.idle.ms (10 minutes).
	DefaultConnectionsMaxIdle = 10 * time.Minute
	// DefaultQueuedMaxRequestBytes is queued.max.request.bytes: the
	// memory, over all connections, for large requests being received.
	// Kafka's default is unbounded; 3 waves of 250 slow senders announcing
	// 16 MiB each got a broker killed in a 2 GiB cgroup.
	DefaultQueuedMaxRequestBytes = 256 << 20
	// DefaultRequestReadTimeout is how long a request may take to arrive
	// in full, from its first byte. Clients give up on a request after
	// their request.timeout.ms, 30 s by default, so one still arriving
	// after that is one nobody waits for.
	DefaultRequestReadTimeout = 30 * time.Second
	// DefaultUnansweredAfter is how long a decoded request may go without
	// an answer before netloop reports it: far past any wait the broker
	// imposes (a fetch's max wait, a produce's fsync), so one that old is
	// one nobody will answer (a bug; its client times out, and responses
	// behind it on its connection wait too).
	DefaultUnansweredAfter = 2 * time.Minute
)

// ErrConfig is returned (wrapped) by New for an unusable Config.
var ErrConfig = errors.New("netloop: invalid config")

// Config configures a Server. The zero value of every field means its
// default.
type Config struct {
	// Listeners are "host:port" listeners, PLAINTEXT unless TLS says; default
	// [DefaultListener]. Port 0 picks a free port; Server.Addrs reports it.
	Listeners []string
	// ListenerNames, when set, names each of Listeners (same order and
	// length): the listener names of Kafka's listeners key, handed to the
	// broker with every request as wire.Session.Listener.
	ListenerNames []string
	// TLS, when set, has one entry per listener (same order and length as
	// Listeners): a nil entry is a plaintext listener, served on the gnet
	// loops; a non-nil one is served with crypto/tls, one reader and one
	// writer goroutine per connection (tls.go, "TLS listeners" in the
	// package documentation).
	TLS []*TLSListener
	// MaxRequestBytes is socket.request.max.bytes: a frame whose size
	// prefix is above it (or negative) closes the connection before any
	// of it is buffered. Default DefaultMaxRequestBytes.
	MaxRequestBytes int32
	// MaxInFlightPerConn bounds the requests of one connection that are
	// decoded but not yet answered and written; at the bound the
	// connection is not decoded (and its socket not read) until one
	// response is written. Default DefaultMaxInFlightPerConn (16).
	MaxInFlightPerConn int
	// MaxOutboundBytes is the per-connection high-water mark of response
	// bytes held in memory and not yet written (file regions do not count:
	// they hold no memory). Past it the connection is not decoded until it
	// drains below. Default DefaultMaxOutboundBytes.
	MaxOutboundBytes int
	// ConnectionsMaxIdle is connections.max.idle.ms: a connection with no
	// traffic in either direction and no request in flight for this long
	// is closed. 0 means the default (10 minutes); a negative value
	// disables the check.
	ConnectionsMaxIdle time.Duration
	// QueuedMaxRequestBytes is queued.max.request.bytes: a budget, over
	// all connections, for the bytes of large requests (64 KiB and up)
	// still being received. A request takes its declared size from it
	// once its first 64 KiB are in; one that does not fit waits, its
	// connection not read, until others complete. One request always
	// fits when nothing else holds the budget. 0 means the default
	// (DefaultQueuedMaxRequestBytes); negative is unbounded.
	QueuedMaxRequestBytes int64
	// RequestReadTimeout bounds how long a request may take to arrive in
	// full, from its first byte (its size prefix); a connection whose
	// request is slower is closed with a log line. 0 means the default
	// (DefaultRequestReadTimeout); negative disables it.
	RequestReadTimeout time.Duration
	// UnansweredAfter is the age past which a request still without an
	// answer is logged as an error (once) and counted
	// (Stats.Unanswered). 0 means the default (DefaultUnansweredAfter);
	// negative disables the check.
	UnansweredAfter time.Duration
	// MaxConnections is max.connections; 0 = unlimited. At the limit a
	// listener stops accepting until a connection closes (slots.go).
	MaxConnections int
	// ListenerMaxConnections are listener.name.<l>.max.connections, by
	// listener name (ListenerNames): at its limit a listener stops
	// accepting until one of its connections closes, as at
	// MaxConnections. The limits change live (SetConnectionLimits).
	ListenerMaxConnections map[string]int
	// ProtectedListener is spared MaxConnections: the inter-broker
	// listener of a broker with several (Kafka's protectedListener).
	ProtectedListener string
	// MaxConnectionsPerIP is max.connections.per.ip; 0 = unlimited.
	MaxConnectionsPerIP int
	// MaxConnectionsPerIPOverrides is max.connections.per.ip.overrides:
	// the limit of each address (as its unmapped netip.Addr prints), in
	// place of MaxConnectionsPerIP; 0 admits none.
	MaxConnectionsPerIPOverrides map[string]int
	// ConnectionGate, if set, hears of each accepted connection before
	// it is served (connection creation quotas; gate.go).
	ConnectionGate ConnectionGate
	// EventLoops is the number of gnet event loops; 0 = one per CPU.
	EventLoops int
	// Logger receives one line per notable event (refused connection, bad
	// frame, bad request); nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults returns cfg with zero fields set to their defaults, or an
// error naming the first unusable field.
func (cfg Config) withDefaults() (Config, error) {
	if len(cfg.Listeners) == 0 {
		cfg.Listeners = []string{DefaultListener}
	}
	seen := make(map[string]bool, len(cfg.Listeners))
	for _, l := range cfg.Listeners {
		if _, _, err := net.SplitHostPort(l); err != nil {
			return cfg, fmt.Errorf("%w: listener %q: %v", ErrConfig, l, err)
		}
		if seen[l] {
			return cfg, fmt.Errorf("%w: listener %q given twice", ErrConfig, l)
		}
		seen[l] = true
	}
	if cfg.ListenerNames != nil && len(cfg.ListenerNames) != len(cfg.Listeners) {
		return cfg, fmt.Errorf("%w: %d listener names for %d listeners", ErrConfig, len(cfg.ListenerNames), len(cfg.Listeners))
	}
	if cfg.TLS != nil && len(cfg.TLS) != len(cfg.Listeners) {
		return cfg, fmt.Errorf("%w: %d TLS entries for %d listeners", ErrConfig, len(cfg.TLS), len(cfg.Listeners))
	}
	for i, t := range cfg.TLS {
		if t != nil {
			if err := t.check(cfg.Listeners[i]); err != nil {
				return cfg, err
			}
		}
	}
	switch {
	case cfg.MaxRequestBytes == 0:
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	case cfg.MaxRequestBytes < 0:
		return cfg, fmt.Errorf("%w: MaxRequestBytes %d", ErrConfig, cfg.MaxRequestBytes)
	}
	switch {
	case cfg.MaxInFlightPerConn == 0:
		cfg.MaxInFlightPerConn = DefaultMaxInFlightPerConn
	case cfg.MaxInFlightPerConn < 0:
		return cfg, fmt.Errorf("%w: MaxInFlightPerConn %d", ErrConfig, cfg.MaxInFlightPerConn)
	}
	switch {
	case cfg.MaxOutboundBytes == 0:
		cfg.MaxOutboundBytes = DefaultMaxOutboundBytes
	case cfg.MaxOutboundBytes < 0:
		return cfg, fmt.Errorf("%w: MaxOutboundBytes %d", ErrConfig, cfg.MaxOutboundBytes)
	}
	if cfg.ConnectionsMaxIdle == 0 {
		cfg.ConnectionsMaxIdle = DefaultConnectionsMaxIdle
	}
	if cfg.QueuedMaxRequestBytes == 0 {
		cfg.QueuedMaxRequestBytes = DefaultQueuedMaxRequestBytes
	}
	if cfg.RequestReadTimeout == 0 {
		cfg.RequestReadTimeout = DefaultRequestReadTimeout
	}
	if cfg.UnansweredAfter == 0 {
		cfg.UnansweredAfter = DefaultUnansweredAfter
	}
	if cfg.MaxConnections < 0 || cfg.MaxConnectionsPerIP < 0 || cfg.EventLoops < 0 {
		return cfg, fmt.Errorf("%w: negative MaxConnections, MaxConnectionsPerIP or EventLoops", ErrConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}
