package zkmeta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
)

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Listener         string // listener name, "PLAINTEXT"
	Host             string // "" = all interfaces (Kafka's null host)
	Port             int32
	SecurityProtocol string // "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"
}

// String is Kafka's EndPoint.connectionString: "LISTENER://host:port",
// an IPv6 host in brackets.
func (e Endpoint) String() string {
	hostport := ":" + strconv.Itoa(int(e.Port))
	if e.Host != "" {
		hostport = net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
	}
	return e.Listener + "://" + hostport
}

// VersionRange is a supported feature's version range.
type VersionRange struct{ Min, Max int16 }

// BrokerInfo is /brokers/ids/<id>, written as version 5.
type BrokerInfo struct {
	ID        int32
	Endpoints []Endpoint // in "endpoints" order
	Rack      string     // "" = none
	Features  map[string]VersionRange
	JMXPort   int32 // -1 = none
	Timestamp int64 // ms; 0 = the time of encoding
	Epoch     int64 // the znode's czxid (read only; not in the JSON)
}

// brokerInfoVersion is the version Kafka 3.9 writes (IBP >= 2.7).
const brokerInfoVersion = 5

// EncodeBrokerInfo is BrokerIdZNode.encode at version 5: host and port of
// the first PLAINTEXT endpoint (null and -1 without one), the endpoints,
// the listener map, jmx_port, timestamp as a string, rack when set,
// features; keys in the order of Kafka's mutable.HashMap.
func EncodeBrokerInfo(b BrokerInfo) []byte {
	host, port := []byte("null"), int64(-1)
	for _, e := range b.Endpoints {
		if e.SecurityProtocol == "PLAINTEXT" {
			host, port = jStr(e.Host), int64(e.Port)
			if e.Host == "" {
				host = []byte("null")
			}
			break
		}
	}
	ts := b.Timestamp
	if ts == 0 {
		ts = time.Now().UnixMilli()
	}
	eps := make([]string, len(b.Endpoints))
	for i, e := range b.Endpoints {
		eps[i] = e.String()
	}
	fields := []field{
		{"version", jInt(brokerInfoVersion)},
		{"host", host},
		{"port", jInt(port)},
		{"endpoints", jStrs(eps)},
		{"jmx_port", jInt(int64(b.JMXPort))},
		{"timestamp", jStr(strconv.FormatInt(ts, 10))},
	}
	if b.Rack != "" {
		fields = append(fields, field{"rack", jStr(b.Rack)})
	}
	fields = append(fields,
		field{"listener_security_protocol_map", encodeListenerMap(b.Endpoints)},
		field{"features", encodeSupportedFeatures(b.Features)})
	return object(orderFields(fields, func(k []string) []string { return scalaMutableOrder(6, k) }))
}

// encodeListenerMap is endpoints.map(name -> protocol).toMap: an immutable
// Scala map.
func encodeListenerMap(eps []Endpoint) []byte {
	var fields []field
	seen := map[string]int{}
	for _, e := range eps {
		if i, ok := seen[e.Listener]; ok {
			fields[i].raw = jStr(e.SecurityProtocol)
			continue
		}
		seen[e.Listener] = len(fields)
		fields = append(fields, field{e.Listener, jStr(e.SecurityProtocol)})
	}
	return object(orderFields(fields, scalaImmutableOrder))
}

// encodeSupportedFeatures is Features.toMap: a java.util.HashMap of
// LinkedHashMaps {"min_version":..,"max_version":..}. Names are taken in
// sorted order (Kafka's source map is itself a HashMap).
func encodeSupportedFeatures(fs map[string]VersionRange) []byte {
	fields := make([]field, 0, len(fs))
	for _, n := range slices.Sorted(maps.Keys(fs)) {
		r := fs[n]
		fields = append(fields, field{n, object([]field{{"min_version", jInt(int64(r.Min))}, {"max_version", jInt(int64(r.Max))}})})
	}
	return object(orderFields(fields, javaHashMapOrder))
}

type brokerJSON struct {
	Version     *int                              `json:"version"`
	Host        *string                           `json:"host"`
	Port        *int32                            `json:"port"`
	Endpoints   []string                          `json:"endpoints"`
	JMXPort     *int32                            `json:"jmx_port"`
	Timestamp   string                            `json:"timestamp"`
	Rack        *string                           `json:"rack"`
	ListenerMap map[string]string                 `json:"listener_security_protocol_map"`
	Features    map[string]map[string]json.Number `json:"features"`
}

// defaultListenerMap is SocketServerConfigs.DEFAULT_NAME_TO_SECURITY_PROTO:
// without a listener_security_protocol_map, a listener is named after its
// protocol.
var defaultListenerMap = map[string]string{
	"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL",
}

var endpointRE = regexp.MustCompile(`^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$`)

// ParseEndpoint parses "LISTENER://host:port" with listenerMap giving the
// security protocol of each listener name (nil: Kafka's default map).
func ParseEndpoint(s string, listenerMap map[string]string) (Endpoint, error) {
	m := endpointRE.FindStringSubmatch(s)
	if m == nil {
		return Endpoint{}, fmt.Errorf("zkmeta: malformed endpoint %q", s)
	}
	port, err := strconv.ParseInt(m[3], 10, 32)
	if err != nil {
		return Endpoint{}, fmt.Errorf("zkmeta: endpoint %q: %w", s, err)
	}
	if listenerMap == nil {
		listenerMap = defaultListenerMap
	}
	proto, ok := listenerMap[m[1]]
	if !ok {
		return Endpoint{}, fmt.Errorf("zkmeta: endpoint %q: listener %q has no security protocol", s, m[1])
	}
	return Endpoint{Listener: m[1], Host: m[2], Port: int32(port), SecurityProtocol: proto}, nil
}

// DecodeBrokerInfo is BrokerIdZNode.decode: versions 1 to 5.
func DecodeBrokerInfo(id int32, data []byte) (BrokerInfo, error) {
	var j brokerJSON
	if err := decodeJSON("broker "+strconv.Itoa(int(id)), data, &j); err != nil {
		return BrokerInfo{}, err
	}
	if j.Version == nil || *j.Version < 1 {
		return BrokerInfo{}, fmt.Errorf("zkmeta: unsupported version of broker registration: %q", truncate(data))
	}
	if j.JMXPort == nil {
		return BrokerInfo{}, fmt.Errorf("zkmeta: broker %d registration has no jmx_port: %q", id, truncate(data))
	}
	b := BrokerInfo{ID: id, JMXPort: *j.JMXPort}
	if *j.Version == 1 {
		if j.Host == nil || j.Port == nil {
			return BrokerInfo{}, fmt.Errorf("zkmeta: broker %d registration v1 without host/port: %q", id, truncate(data))
		}
		b.Endpoints = []Endpoint{{Listener: "PLAINTEXT", Host: *j.Host, Port: *j.Port, SecurityProtocol: "PLAINTEXT"}}
	} else {
		lm := j.ListenerMap
		for _, s := range j.Endpoints {
			e, err := ParseEndpoint(s, lm)
			if err != nil {
				return BrokerInfo{}, fmt.Errorf("zkmeta: broker %d: %w", id, err)
			}
			b.Endpoints = append(b.Endpoints, e)
		}
	}
	if j.Timestamp != "" {
		ts, err := strconv.ParseInt(j.Timestamp, 10, 64)
		if err != nil {
			return BrokerInfo{}, fmt.Errorf("zkmeta: broker %d: timestamp %q: %w", id, j.Timestamp, err)
		}
		b.Timestamp = ts
	}
	if j.Rack != nil {
		b.Rack = *j.Rack
	}
	if len(j.Features) > 0 {
		b.Features = make(map[string]VersionRange, len(j.Features))
		for name, r := range j.Features {
			minV, err1 := r["min_version"].Int64()
			maxV, err2 := r["max_version"].Int64()
			if err := errors.Join(err1, err2); err != nil {
				return BrokerInfo{}, fmt.Errorf("zkmeta: broker %d: feature %q: %w", id, name, err)
			}
			b.Features[name] = VersionRange{Min: int16(minV), Max: int16(maxV)}
		}
	}
	return b, nil
}

// RegisterBroker creates the broker's ephemeral /brokers/ids/<id> and
// returns the broker epoch, the znode's czxid. As Kafka it creates the
// node empty and sets its data in one multi (so its version is 1).
//
// When the node exists:
//   - owned by the current session: its czxid (a retried registration);
//   - owned by a session of this client that expired (ZOOKEEPER-2985): it
//     is deleted and created again;
//   - owned by another session, as after a restart within the session
//     timeout of a broker killed with SIGKILL: RegisterBroker watches it
//     and waits until it goes (the old session closes or expires), up to
//     ctx, then registers.
func (c *Client) RegisterBroker(ctx context.Context, b BrokerInfo) (epoch int64, err error) {
	p := BrokerPath(b.ID)
	data := EncodeBrokerInfo(b)
	for {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("zkmeta: registering broker %d: %w", b.ID, err)
		}
		res, err := c.multi(
			&zk.CreateRequest{Path: c.abs(p), Acl: acl, Flags: zk.FlagEphemeral},
			&zk.SetDataRequest{Path: c.abs(p), Data: data, Version: 0})
		if err == nil {
			c.log.Info("registered broker", "broker", b.ID, "path", p, "epoch", res[1].Stat.Czxid)
			return res[1].Stat.Czxid, nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return 0, pathError("register", p, err)
		}
		ok, st, gone, err := c.existsW(p)
		if err != nil {
			return 0, err
		}
		switch {
		case !ok:
			continue
		case c.ownSession(st.EphemeralOwner):
			return st.Czxid, nil
		case c.formerSession(st.EphemeralOwner):
			c.log.Info("re-creating broker registration left by an expired session", "broker", b.ID,
				"owner", "0x"+strconv.FormatInt(st.EphemeralOwner, 16))
			if err := c.delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return 0, err
			}
			continue
		}
		c.log.Warn("broker id is registered by another session; waiting for it to close or expire",
			"broker", b.ID, "owner", "0x"+strconv.FormatInt(st.EphemeralOwner, 16),
			"session_timeout", c.cfg.SessionTimeout)
		select {
		case <-gone:
		case <-ctx.Done():
			return 0, fmt.Errorf("zkmeta: broker %d is registered by session 0x%x: %w (%w)", b.ID, st.EphemeralOwner, ErrNodeExists, ctx.Err())
		case <-c.closed:
			return 0, ErrClosed
		}
	}
}

// Broker reads one registration; ErrNoNode when the broker is not live.
func (c *Client) Broker(id int32) (BrokerInfo, error) {
	data, st, err := c.get(BrokerPath(id))
	if err != nil {
		return BrokerInfo{}, err
	}
	b, err := DecodeBrokerInfo(id, data)
	b.Epoch = st.Czxid
	return b, err
}

// Brokers reads every live broker's registration, with its epoch.
func (c *Client) Brokers() (map[int32]BrokerInfo, error) {
	names, err := c.children(PathBrokerIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]BrokerInfo, len(names))
	for _, id := range parseIDs(names) {
		b, err := c.Broker(id)
		if errors.Is(err, zk.ErrNoNode) {
			continue // went away since the listing
		}
		if err != nil {
			return nil, err
		}
		out[id] = b
	}
	return out, nil
}

// WatchBrokerIDs lists the live broker ids (sorted) and arms a one-shot
// watch on the list.
func (c *Client) WatchBrokerIDs() (ids []int32, changed <-chan struct{}, err error) {
	names, ch, err := c.childrenW(PathBrokerIDs)
	if err != nil {
		return nil, nil, err
	}
	return parseIDs(names), ch, nil
}

func parseIDs(names []string) []int32 {
	ids := make([]int32, 0, len(names))
	for _, n := range names {
		if v, err := strconv.ParseInt(n, 10, 32); err == nil {
			ids = append(ids, int32(v))
		}
	}
	slices.Sort(ids)
	return ids
}

// GenerateBrokerID is KafkaZkClient.generateBrokerSequenceId plus
// reserved.broker.max.id: it bumps /brokers/seqid's version and returns
// reservedMax + the new version.
func (c *Client) GenerateBrokerID(reservedMax int32) (int32, error) {
	for {
		st, err := c.set(PathBrokerSeqID, []byte{}, -1)
		if errors.Is(err, zk.ErrNoNode) {
			if err := c.createRecursive(PathBrokerSeqID, nil, false); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		return reservedMax + st.Version, nil
	}
}
