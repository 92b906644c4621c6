package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrUnsupported is returned by Load for a setting samsa does not
// support, where going on without it would surprise the operator (ACLs
// on ZooKeeper that would not be written, for one).
var ErrUnsupported = errors.New("config: not supported")

// Input is one layer of static configuration and where it came from, for
// error messages ("server.properties", "environment", "flags").
type Input struct {
	Origin string
	Values map[string]string
}

// Listener is one NAME://host:port endpoint. An empty Host listens on every
// interface; Port 0 asks the OS for a free port.
type Listener struct {
	Name     string
	Protocol string // security protocol, from listener.security.protocol.map
	Host     string
	Port     int
}

// Address is host:port for net.Listen.
func (l Listener) Address() string { return net.JoinHostPort(l.Host, strconv.Itoa(l.Port)) }

func (l Listener) String() string { return l.Name + "://" + l.Address() }

// Broker is the static broker configuration: validated, typed, immutable.
type Broker struct {
	// Static holds every key set explicitly (file, environment, flags),
	// validated; it is the STATIC_BROKER_CONFIG layer.
	Static map[string]string
	// Warnings are things an operator should act on: unknown keys, topic
	// configs set at broker level, listeners that are skipped.
	Warnings []string
	// Notes list keys that were set and are accepted without effect yet
	// (worth an info line, not a warning: Kafka's own files set them).
	Notes []string

	BrokerID            int32
	Rack                string
	Listeners           []Listener
	Advertised          []Listener // nil: advertise the listeners
	LogDirs             []string
	NumPartitions       int32
	ReplicationFactor   int16
	AutoCreateTopics    bool
	DeleteTopicEnable   bool
	MessageMaxBytes     int32
	RequestMaxBytes     int32
	ConnectionsMaxIdle  time.Duration // 0: never close idle connections
	MaxConnections      int
	MaxConnectionsPerIP int
	NetworkThreads      int
	ShutdownTimeout     time.Duration
	// Cluster is set when zookeeper.connect is: the broker is one of a
	// ZooKeeper-coordinated cluster. Nil: it runs alone.
	Cluster *Cluster
}

// Cluster is the cluster-mode part of the configuration.
type Cluster struct {
	// ZooKeeperConnect is zookeeper.connect as written: servers and an
	// optional chroot.
	ZooKeeperConnect  string
	SessionTimeout    time.Duration
	ConnectionTimeout time.Duration
	// GenerateBrokerID is set when no broker.id was configured and
	// broker.id.generation.enable is true: the broker takes the id its
	// data directory remembers, or a new one from ZooKeeper (BrokerID is
	// -1 until then).
	GenerateBrokerID    bool
	ReservedBrokerMaxID int32
	// InterBrokerListener is the listener that the controller and the
	// other brokers reach this broker on.
	InterBrokerListener       string
	ControlledShutdown        bool
	ControlledShutdownRetries int
	ControlledShutdownBackoff time.Duration
	OffsetsReplicationFactor  int16
	// AutoLeaderRebalance, LeaderImbalanceCheckInterval and
	// LeaderImbalancePerBroker are the controller's leader balance
	// (auto.leader.rebalance.enable and the leader.imbalance.* keys).
	AutoLeaderRebalance          bool
	LeaderImbalanceCheckInterval time.Duration
	LeaderImbalancePerBroker     int
}

// Layers returns the broker's static layer for resolution.
func (b *Broker) Layers() Layers { return Layers{Static: b.Static} }

// Value is the effective value of a broker config (empty when null).
func (b *Broker) Value(name string) string {
	e, _ := ResolveBroker(name, b.Layers())
	return e.Value
}

// Defaults is the configuration with nothing set.
func Defaults() *Broker {
	b, err := Load()
	if err != nil {
		panic("config: defaults do not validate: " + err.Error())
	}
	return b
}

// Load merges inputs (later inputs win: pass defaults-file, environment,
// flags in that order), validates every known key, and builds a Broker.
// Errors name the key and the input it came from; unknown keys become
// warnings, so a Kafka server.properties loads unchanged.
func Load(inputs ...Input) (*Broker, error) {
	static := make(map[string]string)
	origin := make(map[string]string)
	var warnings []string
	for _, in := range inputs {
		for _, k := range slices.Sorted(maps.Keys(in.Values)) {
			v := strings.TrimSpace(in.Values[k])
			def, known := staticDef(k)
			if !known {
				def, known = listenerSASLDef(k)
			}
			if !known {
				if _, isTopic := TopicDef(k); isTopic {
					warnings = append(warnings, fmt.Sprintf("%s (from %s) is a topic config; set a broker default such as its log.* synonym instead; ignored", k, in.Origin))
				} else {
					warnings = append(warnings, fmt.Sprintf("%s (from %s) is not a known config; ignored", k, in.Origin))
				}
				continue
			}
			if v == "" && def.Nullable {
				// An empty value unsets a nullable key (--zookeeper.connect= clears the file's).
				delete(static, k)
				origin[k] = in.Origin
				continue
			}
			if err := def.Validate(v); err != nil {
				if k != def.Name { // a listener override: name it, not only the key it overrides
					return nil, fmt.Errorf("%s: %w (from %s)", k, err, in.Origin)
				}
				return nil, fmt.Errorf("%w (from %s)", err, in.Origin)
			}
			static[k] = v
			origin[k] = in.Origin
		}
	}
	var notes []string
	for _, k := range slices.Sorted(maps.Keys(static)) {
		d, ok := staticDef(k)
		if !ok {
			d, ok = listenerSASLDef(k)
		}
		switch {
		case !ok:
		case d.Ignored:
			notes = append(notes, fmt.Sprintf("%s (from %s) is accepted but has no effect yet: %s", k, origin[k], d.Doc))
		case k != d.Name && !strings.HasPrefix(d.Name, "ssl.") && !saslPerListener(d.Name):
			notes = append(notes, fmt.Sprintf("%s (from %s) is accepted but has no effect yet: samsa applies %s to every listener alike", k, origin[k], d.Name))
		}
	}
	b := &Broker{Static: static, Warnings: warnings, Notes: notes}
	if err := b.build(origin); err != nil {
		return nil, err
	}
	if err := b.buildCluster(origin); err != nil {
		return nil, err
	}
	return b, nil
}

// buildCluster fills Cluster when zookeeper.connect is set.
func (b *Broker) buildCluster(origin map[string]string) error {
	zk := b.Value(KeyZooKeeperConnect)
	if zk == "" {
		return nil
	}
	from := func(key string) string {
		if o := origin[key]; o != "" {
			return o
		}
		return "default"
	}
	if ParseBool(b.Value(KeyZooKeeperSetACL)) {
		return fmt.Errorf("%w: %s=true (from %s): samsa does not write ZooKeeper ACLs (that needs SASL to ZooKeeper); set it false, and protect ZooKeeper by its network", ErrUnsupported, KeyZooKeeperSetACL, from(KeyZooKeeperSetACL))
	}
	servers, chroot, _ := strings.Cut(zk, "/")
	if strings.TrimSpace(servers) == "" {
		return fmt.Errorf("%w: %s=%q (from %s): names no ZooKeeper server", ErrInvalid, KeyZooKeeperConnect, zk, from(KeyZooKeeperConnect))
	}
	for _, hp := range strings.Split(servers, ",") {
		if _, _, err := net.SplitHostPort(strings.TrimSpace(hp)); err != nil {
			return fmt.Errorf("%w: %s=%q (from %s): %q is not host:port", ErrInvalid, KeyZooKeeperConnect, zk, from(KeyZooKeeperConnect), hp)
		}
	}
	if chroot != "" && (strings.HasSuffix(chroot, "/") || strings.Contains(chroot, "//")) {
		return fmt.Errorf("%w: %s=%q (from %s): the chroot /%s is not a ZooKeeper path", ErrInvalid, KeyZooKeeperConnect, zk, from(KeyZooKeeperConnect), chroot)
	}
	c := &Cluster{
		ZooKeeperConnect:             zk,
		SessionTimeout:               time.Duration(ParseInt(b.Value(KeyZooKeeperSessionTimeout))) * time.Millisecond,
		ReservedBrokerMaxID:          int32(ParseInt(b.Value(KeyReservedBrokerMaxID))),
		ControlledShutdown:           ParseBool(b.Value(KeyControlledShutdown)),
		ControlledShutdownRetries:    int(ParseInt(b.Value(KeyControlledShutdownMaxRetries))),
		ControlledShutdownBackoff:    time.Duration(ParseInt(b.Value(KeyControlledShutdownBackoff))) * time.Millisecond,
		OffsetsReplicationFactor:     int16(ParseInt(b.Value(KeyOffsetsReplicationFactor))),
		AutoLeaderRebalance:          ParseBool(b.Value(KeyAutoLeaderRebalance)),
		LeaderImbalanceCheckInterval: time.Duration(ParseInt(b.Value(KeyLeaderImbalanceCheckInterval))) * time.Second,
		LeaderImbalancePerBroker:     int(ParseInt(b.Value(KeyLeaderImbalancePerBroker))),
	}
	c.ConnectionTimeout = c.SessionTimeout
	if v := b.Value(KeyZooKeeperConnectionTimeout); v != "" {
		c.ConnectionTimeout = time.Duration(ParseInt(v)) * time.Millisecond
	}
	_, idSet := b.Static[KeyBrokerID]
	_, nodeSet := b.Static[KeyNodeID]
	if !idSet && !nodeSet && ParseBool(b.Value(KeyBrokerIDGeneration)) {
		c.GenerateBrokerID = true
		b.BrokerID = -1
	} else if b.BrokerID > c.ReservedBrokerMaxID {
		return fmt.Errorf("%w: %s=%d (from %s): above %s (%d), where generated ids live; pick a lower id or raise %s", ErrInvalid, KeyBrokerID, b.BrokerID, from(KeyBrokerID), KeyReservedBrokerMaxID, c.ReservedBrokerMaxID, KeyReservedBrokerMaxID)
	}
	ln, err := b.interBrokerListener(from)
	if err != nil {
		return err
	}
	c.InterBrokerListener = ln
	b.Cluster = c
	return nil
}

// interBrokerListener picks the listener named by
// inter.broker.listener.name, or the first one whose protocol is
// security.inter.broker.protocol, as Kafka does; it must be advertised,
// and a SASL one needs a mechanism samsa's brokers can log in with.
func (b *Broker) interBrokerListener(from func(key string) string) (string, error) {
	name := strings.ToUpper(b.Value(KeyInterBrokerListener))
	if name == "" {
		proto := strings.ToUpper(b.Value(KeyInterBrokerProtocol))
		for _, ln := range b.Listeners {
			if ln.Protocol == proto {
				name = ln.Name
				break
			}
		}
		if name == "" {
			return "", fmt.Errorf("%w: %s=%s: no listener uses that security protocol; set %s to one of the listeners", ErrInvalid, KeyInterBrokerProtocol, proto, KeyInterBrokerListener)
		}
	}
	i := slices.IndexFunc(b.Listeners, func(l Listener) bool { return l.Name == name })
	if i < 0 {
		return "", fmt.Errorf("%w: %s=%s names no listener in listeners", ErrInvalid, KeyInterBrokerListener, name)
	}
	if p := b.Listeners[i].Protocol; strings.HasPrefix(p, "SASL_") {
		switch m := b.Value(KeyInterBrokerSASLMechanism); m {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			return "", fmt.Errorf("%w: the inter-broker listener %s uses %s, and %s=%s (from %s); samsa's brokers log in to each other with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512",
				ErrUnsupported, name, p, KeyInterBrokerSASLMechanism, m, from(KeyInterBrokerSASLMechanism))
		}
	}
	if b.Advertised != nil && !slices.ContainsFunc(b.Advertised, func(l Listener) bool { return l.Name == name }) {
		return "", fmt.Errorf("%w: %s=%s is not in advertised.listeners: other brokers could not reach this one", ErrInvalid, KeyInterBrokerListener, name)
	}
	return name, nil
}

func (b *Broker) build(origin map[string]string) error {
	l := b.Layers()
	get := func(name string) string { e, _ := ResolveBroker(name, l); return e.Value }
	fail := func(key, v string, why string) error {
		from := origin[key]
		if from == "" {
			from = "default"
		}
		return fmt.Errorf("%w: %s=%q (from %s): %s", ErrInvalid, key, v, from, why)
	}

	b.BrokerID = int32(ParseInt(get(KeyBrokerID)))
	if _, set := b.Static[KeyBrokerID]; !set && b.Static[KeyNodeID] != "" {
		b.BrokerID = int32(ParseInt(b.Static[KeyNodeID]))
	}
	b.Rack = get(KeyRack)

	protocols, err := parseProtocolMap(get(KeySecurityProtocolMap))
	if err != nil {
		return fail(KeySecurityProtocolMap, get(KeySecurityProtocolMap), err.Error())
	}
	controllers := ParseList(get(KeyControllerListeners))
	all, err := parseListeners(get(KeyListeners), protocols)
	if err != nil {
		return fail(KeyListeners, get(KeyListeners), err.Error())
	}
	for _, ln := range all {
		if slices.Contains(controllers, ln.Name) {
			b.Warnings = append(b.Warnings, fmt.Sprintf("listener %s is a KRaft controller listener (controller.listener.names); samsa does not serve it", ln))
			continue
		}
		if !servedProtocols[ln.Protocol] {
			return fail(KeyListeners, get(KeyListeners), fmt.Sprintf("listener %s uses %s; samsa serves PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL listeners", ln.Name, ln.Protocol))
		}
		b.Listeners = append(b.Listeners, ln)
	}
	if len(b.Listeners) == 0 {
		return fail(KeyListeners, get(KeyListeners), "no listener left to serve")
	}
	if v := get(KeyAdvertisedListeners); v != "" {
		adv, err := parseListeners(v, protocols)
		if err != nil {
			return fail(KeyAdvertisedListeners, v, err.Error())
		}
		for _, a := range adv {
			if slices.Contains(controllers, a.Name) {
				continue
			}
			if !slices.ContainsFunc(b.Listeners, func(ln Listener) bool { return ln.Name == a.Name }) {
				return fail(KeyAdvertisedListeners, v, fmt.Sprintf("%s names no listener in listeners", a.Name))
			}
			if ip := net.ParseIP(a.Host); a.Host == "" || (ip != nil && ip.IsUnspecified()) {
				return fail(KeyAdvertisedListeners, v, fmt.Sprintf("%s must name a host clients can reach, not %q", a.Name, a.Host))
			}
			if a.Port == 0 {
				return fail(KeyAdvertisedListeners, v, fmt.Sprintf("%s must name a port", a.Name))
			}
			b.Advertised = append(b.Advertised, a)
		}
	}

	b.LogDirs = ParseList(get(KeyLogDirs))
	if len(b.LogDirs) == 0 {
		b.LogDirs = []string{get(KeyLogDir)}
	}
	b.NumPartitions = int32(ParseInt(get(KeyNumPartitions)))
	rf := ParseInt(get(KeyReplicationFactor))
	if rf > 32767 {
		return fail(KeyReplicationFactor, get(KeyReplicationFactor), "must fit in 16 bits")
	}
	b.ReplicationFactor = int16(rf)
	b.AutoCreateTopics = ParseBool(get(KeyAutoCreateTopics))
	b.DeleteTopicEnable = ParseBool(get(KeyDeleteTopicEnable))
	b.MessageMaxBytes = int32(ParseInt(get(KeyMessageMaxBytes)))
	b.RequestMaxBytes = int32(ParseInt(get(KeyRequestMaxBytes)))
	b.ConnectionsMaxIdle = time.Duration(ParseInt(get(KeyConnectionsMaxIdle))) * time.Millisecond
	b.MaxConnections = int(ParseInt(get(KeyMaxConnections)))
	b.MaxConnectionsPerIP = int(ParseInt(get(KeyMaxConnectionsPerIP)))
	b.NetworkThreads = int(ParseInt(get(KeyNetworkThreads)))
	b.ShutdownTimeout = time.Duration(ParseInt(get(KeyShutdownTimeout))) * time.Millisecond
	return nil
}

func parseProtocolMap(v string) (map[string]string, error) {
	m := make(map[string]string)
	for _, item := range ParseList(v) {
		name, proto, ok := strings.Cut(item, ":")
		if !ok || name == "" || proto == "" {
			return nil, fmt.Errorf("entry %q is not NAME:PROTOCOL", item)
		}
		m[strings.ToUpper(strings.TrimSpace(name))] = strings.ToUpper(strings.TrimSpace(proto))
	}
	return m, nil
}

// parseListeners parses "NAME://host:port,..." (IPv6 hosts in brackets).
func parseListeners(v string, protocols map[string]string) ([]Listener, error) {
	var out []Listener
	for _, item := range ParseList(v) {
		name, hostPort, ok := strings.Cut(item, "://")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not NAME://host:port", item)
		}
		name = strings.ToUpper(name)
		host, port, err := net.SplitHostPort(hostPort)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", item, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 0 || p > 65535 {
			return nil, fmt.Errorf("%q: port must be 0-65535", item)
		}
		proto, ok := protocols[name]
		if !ok {
			return nil, fmt.Errorf("listener %s has no security protocol in %s", name, KeySecurityProtocolMap)
		}
		if slices.ContainsFunc(out, func(l Listener) bool { return l.Name == name }) {
			return nil, fmt.Errorf("listener name %s appears twice", name)
		}
		out = append(out, Listener{Name: name, Protocol: proto, Host: host, Port: p})
	}
	return out, nil
}
