package quota

import (
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is what a rate measures.
type Kind int

const (
	Produce Kind = iota // bytes appended (producer_byte_rate)
	Fetch               // record bytes sent (consumer_byte_rate)
	Request             // handling time, in percent of one thread (request_percentage)
)

var kindKeys = [...]string{Produce: KeyProducerByteRate, Fetch: KeyConsumerByteRate, Request: KeyRequestPercentage}

// Configs maps each entity that has quotas to them.
type Configs map[Entity]map[string]float64

// Persist stores every entity's configs after a change to those of
// changed (a file rewrite on a single node). It is called off the
// request path and may block.
type Persist func(changed []Entity, all Configs) error

// Manager holds the quota configs and the rates of the entities they
// apply to.
type Manager struct {
	window  Window
	log     *slog.Logger
	persist Persist
	read    func(Entity) (map[string]float64, error) // nil: the held configs are the truth
	readAll func() (Configs, error)                  // nil: the held configs are the truth

	configs atomic.Pointer[Configs] // nil: no quota anywhere
	clients atomic.Bool             // some user or client-id entity has quotas
	ips     atomic.Pointer[ipTable] // nil: no ip has a connection creation rate

	alterMu sync.Mutex // serializes alterations and their persistence

	mu        sync.Mutex
	rates     map[rateKey]*entityRate
	lastSweep time.Time
}

type rateKey struct {
	kind   Kind
	entity Entity
}

type entityRate struct {
	r         *rate
	throttled bool // the last record was over the quota (for the log line)
	last      time.Time
}

// NewManager starts with configs (nil or empty: none) and persists
// changes through persist (nil: kept in memory only).
func NewManager(configs Configs, persist Persist, w Window, log *slog.Logger) *Manager {
	m := &Manager{window: w, log: log, persist: persist, rates: map[rateKey]*entityRate{}}
	m.install(configs)
	return m
}

// ReadThrough has alterations start from each entity's configs as read
// (ZooKeeperRead) rather than as held. Call it before the Manager is
// shared.
func (m *Manager) ReadThrough(read func(Entity) (map[string]float64, error), readAll func() (Configs, error)) {
	m.read, m.readAll = read, readAll
}

// ReadsThrough reports whether Current reads a store (and may block).
func (m *Manager) ReadsThrough() bool { return m != nil && m.readAll != nil }

// Current is every entity's configs for a description: read from the
// store when there is one to read (ReadsThrough; it may block), else
// the held ones.
func (m *Manager) Current() (Configs, error) {
	if m.readAll != nil {
		return m.readAll()
	}
	return m.Snapshot(), nil
}

func (m *Manager) install(c Configs) {
	if len(c) == 0 {
		m.configs.Store(nil)
	} else {
		m.configs.Store(&c)
	}
	clients := false
	for e := range c {
		clients = clients || !e.IP.Present
	}
	m.clients.Store(clients)
	m.ips.Store(ipTableOf(c))
	m.mu.Lock()
	clear(m.rates) // a rate may now belong to another entity
	m.mu.Unlock()
}

// Enabled reports whether any user or client-id quota is set: the
// request path's one check. A nil Manager has none.
func (m *Manager) Enabled() bool { return m != nil && m.clients.Load() }

// Snapshot is the current configs (never to be modified).
func (m *Manager) Snapshot() Configs {
	if c := m.configs.Load(); c != nil {
		return *c
	}
	return Configs{}
}

// Record adds value to the rate of kind for a request of principal
// ("User:alice") and client id at now, and returns how long the client
// must be throttled: zero within its quota or when it has none.
func (m *Manager) Record(kind Kind, principal, clientID string, value float64, now time.Time) time.Duration {
	c := m.configs.Load()
	if c == nil {
		return 0
	}
	user := UserOf(principal)
	key, bound, ok := resolve(*c, kindKeys[kind], user, clientID)
	if !ok {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	rk := rateKey{kind, key}
	er := m.rates[rk]
	if er == nil {
		er = &entityRate{r: newRate(m.window)}
		m.rates[rk] = er
	}
	er.last = now
	er.r.record(value, now)
	total, span := er.r.measure(now)
	d := throttle(total, span, bound, m.limit(kind))
	if d > 0 && !er.throttled && m.log != nil {
		m.log.Info("client quota exceeded: throttling", "quota", kindKeys[kind], "entity", key.String(),
			"bound", bound, "rate", total/span, "throttle_ms", d.Milliseconds())
	}
	er.throttled = d > 0
	return d
}

// Unrecord takes value back from the rate of kind that Record added it
// to: a fetch throttled after all is answered empty, and Kafka counts
// only what it sends.
func (m *Manager) Unrecord(kind Kind, principal, clientID string, value float64, now time.Time) {
	c := m.configs.Load()
	if c == nil {
		return
	}
	key, _, ok := resolve(*c, kindKeys[kind], UserOf(principal), clientID)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if er := m.rates[rateKey{kind, key}]; er != nil {
		er.r.record(-value, now)
	}
}

// Pending is the throttle the rate of kind already calls for, without
// recording anything: a fetch is answered empty when its client is over
// its request_percentage, as Kafka does, and the fetch's own handling
// time is recorded later.
func (m *Manager) Pending(kind Kind, principal, clientID string, now time.Time) time.Duration {
	c := m.configs.Load()
	if c == nil {
		return 0
	}
	key, bound, ok := resolve(*c, kindKeys[kind], UserOf(principal), clientID)
	if !ok {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	er := m.rates[rateKey{kind, key}]
	if er == nil {
		return 0
	}
	total, span := er.r.measure(now)
	return throttle(total, span, bound, m.limit(kind))
}

// limit bounds the throttle of kind: one window for request_percentage,
// as Kafka bounds it; none for the byte rates.
func (m *Manager) limit(kind Kind) time.Duration {
	if kind == Request {
		return m.window.Size
	}
	return 0
}

// sweep drops the rates of entities idle for a whole window, at most once
// a window, so client ids that come and go do not accumulate.
func (m *Manager) sweep(now time.Time) {
	horizon := time.Duration(m.window.Num) * m.window.Size
	if now.Sub(m.lastSweep) < horizon {
		return
	}
	m.lastSweep = now
	maps.DeleteFunc(m.rates, func(_ rateKey, er *entityRate) bool { return now.Sub(er.last) >= horizon })
}

// UserOf is the user name of a principal ("User:alice" -> "alice").
func UserOf(principal string) string {
	if _, name, ok := strings.Cut(principal, ":"); ok {
		return name
	}
	return principal
}

// WindowCap is the most of kind one request may take for a client with
// a quota: the quota over Num-1 windows, as Kafka caps a fetch's size so
// that a single response cannot exceed what the window allows (which
// would throttle the consumer for every fetch). ok is false without a
// quota.
func (m *Manager) WindowCap(kind Kind, principal, clientID string) (limit int64, ok bool) {
	c := m.configs.Load()
	if c == nil {
		return 0, false
	}
	_, bound, ok := resolve(*c, kindKeys[kind], UserOf(principal), clientID)
	if !ok {
		return 0, false
	}
	v := bound * float64(m.window.Num-1) * m.window.Size.Seconds()
	return int64(min(v, float64(1<<62))), true
}
