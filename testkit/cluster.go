package testkit

import (
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// ClusterKind says which broker a Cluster runs.
type ClusterKind int

const (
	// Samsa runs `samsa serve --config server.properties` (SamsaBinary).
	Samsa ClusterKind = iota
	// Kafka39 runs Apache Kafka 3.9.1 in ZooKeeper mode
	// (`java ... kafka.Kafka server.properties`, ResolveKafka39), the
	// reference samsa's cluster mode is checked against.
	Kafka39
)

func (k ClusterKind) String() string {
	switch k {
	case Samsa:
		return "samsa"
	case Kafka39:
		return "kafka-" + Kafka39Version
	}
	return "ClusterKind(" + strconv.Itoa(int(k)) + ")"
}

// ClusterConfig says how to run a cluster. The zero value is three samsa
// brokers on one new ZooKeeper.
type ClusterConfig struct {
	Kind ClusterKind
	// BrokerKinds runs some brokers (by broker.id) as another kind than
	// Kind: a mixed cluster of Kafka 3.9.1 and samsa brokers on one
	// ZooKeeper, which samsa must join as a peer (issue #21).
	// ClusterBroker.SetKind changes a stopped broker's kind later.
	BrokerKinds map[int32]ClusterKind
	// Brokers is how many brokers to run; default 3. Their broker.id are
	// 1..Brokers, Broker(i) has id i+1.
	Brokers int
	// Properties are added to every broker's server.properties, and win
	// over the defaults (see StartCluster).
	Properties map[string]string
	// BrokerProperties are added to one broker's (by broker.id), after
	// Properties; for example broker.rack.
	BrokerProperties map[int32]map[string]string
	// Chroot is a ZooKeeper path ("/kafka") appended to
	// zookeeper.connect; "" for none. Brokers create it as needed.
	Chroot string
	// SessionTimeout is zookeeper.session.timeout.ms; default 6s, so a
	// killed broker's registration goes soon (the ZooKeeper's 500 ms tick
	// allows 1 s to 10 s).
	SessionTimeout time.Duration
	// ZooKeeper is a running server to use; nil starts one (and Close
	// stops it).
	ZooKeeper *ZooKeeper
	// Binary is the samsa executable (Kind Samsa); "" means SamsaBinary().
	Binary string
	// Env is added to every broker's environment.
	Env []string
	// JVMOptions are added to Kafka's (Kind Kafka39), after
	// KafkaJVMOptions.
	JVMOptions []string
	// Log4j is appended to the log4j.properties of each Kafka broker (Kind
	// Kafka39); ${kafka.logs.dir} there is the broker's Dir(). The base
	// file sends INFO to stdout, which Output captures. For example, to
	// log every request a broker receives, with its header:
	//	log4j.logger.kafka.request.logger=TRACE, requests
	//	log4j.additivity.kafka.request.logger=false
	//	log4j.appender.requests=org.apache.log4j.FileAppender
	//	log4j.appender.requests.File=${kafka.logs.dir}/kafka-request.log
	//	log4j.appender.requests.layout=org.apache.log4j.PatternLayout
	//	log4j.appender.requests.layout.ConversionPattern=[%d] %p %m (%c)%n
	Log4j string
	// ReadyTimeout bounds each broker's start and each Wait; default 60s,
	// or $SAMSA_TESTKIT_READY_TIMEOUT.
	ReadyTimeout time.Duration
	// StopTimeout bounds the wait for exit after SIGTERM; default 60s
	// (Kafka's controlled shutdown retries every 5s when the controller
	// moves).
	StopTimeout time.Duration
	// Output, when set, also receives everything every broker prints.
	Output io.Writer
	// Listener is the security protocol of the brokers' listener, which
	// clients and the brokers themselves use: PLAINTEXT ("" too), SSL,
	// SASL_PLAINTEXT or SASL_SSL. The listener is named after its
	// protocol (Kafka's default listener.security.protocol.map) and is
	// the inter-broker listener; its ssl.* and sasl.* settings (keystore,
	// mechanisms, JAAS, sasl.mechanism.inter.broker.protocol) go in
	// Properties. Not with BrokerLinks, whose internal listener is
	// PLAINTEXT.
	Listener string
	// ExtraListener, when set, is a second listener of this security
	// protocol on a port of its own (ClusterBroker.ExtraAddr,
	// Cluster.ExtraBootstrap), named after its protocol, which must
	// differ from Listener's: for example a PLAINTEXT one for a test's
	// own tools beside a SASL_SSL Listener.
	ExtraListener string
	// BeforeStart, when set, runs once ZooKeeper is up and before any
	// broker starts, with the cluster (ZooKeeperConnect, ZooKeeperConn
	// and ZKPath work; Brokers is empty): what Kafka's docs do before
	// the first start, such as the inter-broker user's SCRAM credential
	// made with `kafka-configs.sh --zookeeper` into /config/users/<u>.
	// An error stops the launch.
	BeforeStart func(c *Cluster) error
	// BrokerLinks routes the brokers' inter-broker traffic through the
	// testkit, on a second listener (InterBrokerListener), so that
	// CutFromBrokers and HealBrokers can cut one broker off from the
	// others (see cluster_links.go).
	BrokerLinks bool
}

// Cluster is a ZooKeeper and brokers in child processes, each broker
// reaching ZooKeeper through its own faultproxy (so its link can be cut),
// and a ZooKeeper session of the test's own for inspection. Methods are
// safe for concurrent use.
type Cluster struct {
	cfg     ClusterConfig
	kafka   *Kafka // Kind Kafka39
	bin     string // Kind Samsa
	dir     string
	zk      *ZooKeeper
	ownsZK  bool
	conn    *zk.Conn
	brokers []*ClusterBroker
	links   *brokerLinks // BrokerLinks
}

// StartCluster starts a cluster for test t and closes it when t ends;
// if t failed, the end of each broker's output goes to the test log.
// Without java and ZooKeeper (and Maven for Kafka39) it skips t, or fails
// it in CI.
//
// Every broker gets a server.properties with the same keys whatever the
// kind, so the one file starts either broker:
//
//	broker.id=<1..N>
//	listeners=PLAINTEXT://127.0.0.1:<free port>
//	advertised.listeners=PLAINTEXT://127.0.0.1:<same port>
//	(another Listener: <Listener>://..., and inter.broker.listener.name=<Listener>;
//	an ExtraListener: a second <ExtraListener>://127.0.0.1:<free port> in both)
//	log.dirs=<Dir()>/data
//	zookeeper.connect=<this broker's faultproxy><Chroot>
//	zookeeper.session.timeout.ms=6000
//	num.partitions=1
//	default.replication.factor=min(N,3)
//	offsets.topic.replication.factor=min(N,3)
//	transaction.state.log.replication.factor=min(N,3)
//	transaction.state.log.min.isr=min(N,2)
//	group.initial.rebalance.delay.ms=0
//
// (with BrokerLinks, a second listener INTERNAL for the inter-broker
// traffic: see cluster_links.go) then Properties and BrokerProperties.
// StartCluster returns when every
// broker is ready: it printed its ready line, accepts connections and is
// registered in /brokers/ids.
func StartCluster(t testing.TB, cfg ClusterConfig) *Cluster {
	t.Helper()
	Require(t, ZooKeeperAvailable() || cfg.ZooKeeper != nil, "ZooKeeper is not installed ("+ZooKeeperJar+" and java; run `make deps`)")
	if cfg.Kind == Kafka39 || slices.Contains(slices.Collect(maps.Values(cfg.BrokerKinds)), Kafka39) {
		RequireKafka39(t)
	}
	c, err := LaunchCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, b := range c.brokers {
				t.Logf("broker %d (%s, %s) output:\n%s", b.id, b.Kind(), b.Addr(), LastLines(b.Output(), 150))
			}
		}
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// LaunchCluster is StartCluster without a test, for TestMain and
// programs; call Close when done.
func LaunchCluster(cfg ClusterConfig) (*Cluster, error) {
	if cfg.Brokers == 0 {
		cfg.Brokers = 3
	}
	cfg.SessionTimeout = orDefault(cfg.SessionTimeout, 6*time.Second)
	cfg.ReadyTimeout = orDefault(cfg.ReadyTimeout, readyTimeout(60*time.Second))
	cfg.StopTimeout = orDefault(cfg.StopTimeout, 60*time.Second)
	if cfg.Chroot != "" && (!strings.HasPrefix(cfg.Chroot, "/") || strings.HasSuffix(cfg.Chroot, "/")) {
		return nil, fmt.Errorf("testkit: Chroot %q must start with / and not end with one", cfg.Chroot)
	}
	switch cfg.Listener {
	case "":
		cfg.Listener = "PLAINTEXT"
	case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		return nil, fmt.Errorf("testkit: Listener %q is not a security protocol", cfg.Listener)
	}
	switch cfg.ExtraListener {
	case "", "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		return nil, fmt.Errorf("testkit: ExtraListener %q is not a security protocol", cfg.ExtraListener)
	}
	if cfg.ExtraListener == cfg.Listener {
		return nil, fmt.Errorf("testkit: ExtraListener %s is the Listener's protocol too; listeners are named after their protocol", cfg.ExtraListener)
	}
	if cfg.BrokerLinks && (cfg.Listener != "PLAINTEXT" || cfg.ExtraListener != "") {
		return nil, fmt.Errorf("testkit: BrokerLinks need the PLAINTEXT Listener (their internal listener is PLAINTEXT)")
	}
	c := &Cluster{cfg: cfg, zk: cfg.ZooKeeper}
	for _, kind := range append([]ClusterKind{cfg.Kind}, slices.Collect(maps.Values(cfg.BrokerKinds))...) {
		if err := c.resolve(kind); err != nil {
			return nil, err
		}
	}
	var err error
	if c.dir, err = os.MkdirTemp("", "samsa-cluster-"); err != nil {
		return nil, fmt.Errorf("testkit: %w", err)
	}
	if err := c.launch(); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// resolve finds what brokers of kind run: Kafka's class path or samsa's
// binary, once each.
func (c *Cluster) resolve(kind ClusterKind) error {
	var err error
	switch kind {
	case Kafka39:
		if c.kafka == nil {
			c.kafka, err = ResolveKafka39()
		}
	case Samsa:
		if c.bin == "" {
			c.bin = c.cfg.Binary
		}
		if c.bin == "" {
			c.bin, err = SamsaBinary()
		}
	default:
		err = fmt.Errorf("testkit: unknown %v", kind)
	}
	return err
}

// kindOf is the kind broker id starts as.
func (c *Cluster) kindOf(id int32) ClusterKind {
	if k, ok := c.cfg.BrokerKinds[id]; ok {
		return k
	}
	return c.cfg.Kind
}

func (c *Cluster) launch() error {
	if c.zk == nil {
		z, err := LaunchZooKeeper(ZooKeeperConfig{})
		if err != nil {
			return err
		}
		c.zk, c.ownsZK = z, true
	}
	conn, _, err := zk.Connect([]string{c.zk.Addr()}, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		return fmt.Errorf("testkit: connecting to zookeeper: %w", err)
	}
	c.conn = conn
	if c.cfg.BeforeStart != nil {
		if err := c.cfg.BeforeStart(c); err != nil {
			return fmt.Errorf("testkit: before the brokers start: %w", err)
		}
	}
	if c.cfg.BrokerLinks {
		c.links = newBrokerLinks(c)
	}
	for i := range c.cfg.Brokers {
		b, err := c.newBroker(int32(i + 1))
		if b != nil {
			c.brokers = append(c.brokers, b) // Close cleans up even a half-made one
		}
		if err != nil {
			return err
		}
	}
	// JVMs start in parallel: the start is mostly class loading and
	// waiting on ZooKeeper, and the cluster is only ready when all are.
	errs := make([]error, len(c.brokers))
	var wg sync.WaitGroup
	for i, b := range c.brokers {
		wg.Go(func() { errs[i] = b.Start() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// properties returns broker id's server.properties lines in a fixed
// order: the defaults, then the configured ones, each key once.
func (c *Cluster) properties(id int32, port, extraPort int, zkConnect, dataDir string, listeners [][2]string) string {
	rf := strconv.Itoa(min(c.cfg.Brokers, 3))
	addr := c.cfg.Listener + "://127.0.0.1:" + strconv.Itoa(port)
	if c.cfg.ExtraListener != "" {
		addr += "," + c.cfg.ExtraListener + "://127.0.0.1:" + strconv.Itoa(extraPort)
	}
	defaults := [][2]string{
		{"broker.id", strconv.Itoa(int(id))},
		{"listeners", addr},
		{"advertised.listeners", addr},
		{"log.dirs", dataDir},
		{"zookeeper.connect", zkConnect},
		{"zookeeper.session.timeout.ms", strconv.FormatInt(c.cfg.SessionTimeout.Milliseconds(), 10)},
		{"num.partitions", "1"},
		{"default.replication.factor", rf},
		{"offsets.topic.replication.factor", rf},
		{"transaction.state.log.replication.factor", rf},
		{"transaction.state.log.min.isr", strconv.Itoa(min(c.cfg.Brokers, 2))},
		{"group.initial.rebalance.delay.ms", "0"},
	}
	if c.cfg.Listener != "PLAINTEXT" {
		defaults = append(defaults, [2]string{"inter.broker.listener.name", c.cfg.Listener})
	}
	values := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := values[k]; !ok {
			order = append(order, k)
		}
		values[k] = v
	}
	for _, kv := range append(defaults, listeners...) {
		set(kv[0], kv[1])
	}
	for _, extra := range []map[string]string{c.cfg.Properties, c.cfg.BrokerProperties[id]} {
		for _, k := range slices.Sorted(maps.Keys(extra)) {
			set(k, extra[k])
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# broker %d of a test cluster, written by samsa's testkit\n", id)
	for _, k := range order {
		// Java properties: a backslash escapes; nothing else here needs it.
		fmt.Fprintf(&sb, "%s=%s\n", k, strings.ReplaceAll(values[k], `\`, `\\`))
	}
	return sb.String()
}

// kafkaLog4j is the base log4j.properties of a Kafka broker: INFO to
// stdout (where the ready line is found), ZooKeeper's chatty client at
// WARN.
const kafkaLog4j = `log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.kafka.request.logger=WARN
`

// Bootstrap is every broker's address, comma-joined, for
// bootstrap.servers or kgo.SeedBrokers(strings.Split(...)).
func (c *Cluster) Bootstrap() string { return strings.Join(c.Addrs(), ",") }

// ExtraBootstrap is every broker's ExtraListener address, comma-joined.
func (c *Cluster) ExtraBootstrap() string {
	addrs := make([]string, len(c.brokers))
	for i, b := range c.brokers {
		addrs[i] = b.ExtraAddr()
	}
	return strings.Join(addrs, ",")
}

// Addrs is every broker's host:port, in broker order.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.brokers))
	for i, b := range c.brokers {
		addrs[i] = b.Addr()
	}
	return addrs
}

// Broker returns the i-th broker (0-based; its broker.id is i+1).
func (c *Cluster) Broker(i int) *ClusterBroker { return c.brokers[i] }

// BrokerByID returns the broker with broker.id id, or nil.
func (c *Cluster) BrokerByID(id int32) *ClusterBroker {
	for _, b := range c.brokers {
		if b.id == id {
			return b
		}
	}
	return nil
}

// Brokers returns every broker, in broker.id order.
func (c *Cluster) Brokers() []*ClusterBroker { return slices.Clone(c.brokers) }

// Kind is the brokers' kind (ClusterConfig.Kind; a mixed cluster's
// brokers each have their own, ClusterBroker.Kind).
func (c *Cluster) Kind() ClusterKind { return c.cfg.Kind }

// Kafka is the resolved Kafka 3.9.1 (when any broker is Kafka39), for
// running its tools against the cluster; nil for samsa.
func (c *Cluster) Kafka() *Kafka { return c.kafka }

// ZooKeeper is the cluster's ZooKeeper server.
func (c *Cluster) ZooKeeper() *ZooKeeper { return c.zk }

// ZooKeeperConnect is a zookeeper.connect string reaching the cluster's
// ZooKeeper directly (no faultproxy), with the chroot.
func (c *Cluster) ZooKeeperConnect() string { return c.zk.Addr() + c.cfg.Chroot }

// ZooKeeperConn is the test's own session with the cluster's ZooKeeper,
// straight to the server. Its paths are absolute: use ZKPath to put the
// chroot in front.
func (c *Cluster) ZooKeeperConn() *zk.Conn { return c.conn }

// ZKPath returns path (a Kafka znode path such as "/brokers/ids") under
// the cluster's chroot.
func (c *Cluster) ZKPath(path string) string {
	if path == "/" {
		if c.cfg.Chroot == "" {
			return "/"
		}
		return c.cfg.Chroot
	}
	return c.cfg.Chroot + path
}

// Dir is the directory holding every broker's Dir.
func (c *Cluster) Dir() string { return c.dir }

// Close ends every broker, the test's ZooKeeper session, the proxies and
// a ZooKeeper Close started, and removes the brokers' directories. samsa
// brokers get SIGTERM and must exit with status 0 (anything else is the
// error returned); Kafka brokers are killed, since their clean shutdown
// (controlled shutdown, broker by broker) only costs the test time.
func (c *Cluster) Close() error {
	if c.links != nil {
		c.links.healAll() // a samsa broker's clean stop asks the controller
	}
	var wg sync.WaitGroup
	errs := make([]error, len(c.brokers))
	for i, b := range c.brokers {
		wg.Go(func() {
			if b.Kind() == Samsa {
				if err := b.Stop(); err != nil {
					errs[i] = fmt.Errorf("broker %d: %w", b.id, err)
				}
			}
			b.Kill()
			b.proxy.Close()
		})
	}
	wg.Wait()
	if c.links != nil {
		c.links.close()
	}
	if c.conn != nil {
		c.conn.Close()
	}
	if c.ownsZK && c.zk != nil {
		c.zk.Close()
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
	return errors.Join(errs...)
}

// brokerIDsPath is Kafka's registration directory, without chroot.
const brokerIDsPath = "/brokers/ids"

// RegisteredBrokers reads the ids under /brokers/ids, sorted.
func (c *Cluster) RegisteredBrokers() ([]int32, error) {
	names, _, err := c.conn.Children(c.ZKPath(brokerIDsPath))
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("testkit: reading %s: %w", brokerIDsPath, err)
	}
	return parseIDs(names), nil
}

func parseIDs(names []string) []int32 {
	ids := make([]int32, 0, len(names))
	for _, n := range names {
		if id, err := strconv.ParseInt(n, 10, 32); err == nil {
			ids = append(ids, int32(id))
		}
	}
	slices.Sort(ids)
	return ids
}

// WaitForBrokers waits, up to ReadyTimeout, until exactly n brokers are
// registered in /brokers/ids, woken by a ZooKeeper watch on each change;
// it returns their ids.
func (c *Cluster) WaitForBrokers(n int) ([]int32, error) {
	var ids []int32
	err := c.waitZK(fmt.Sprintf("%d brokers registered in %s", n, brokerIDsPath), func() (bool, <-chan zk.Event, error) {
		names, _, ev, err := c.conn.ChildrenW(c.ZKPath(brokerIDsPath))
		if errors.Is(err, zk.ErrNoNode) {
			ids = nil
			ev, err := existsWatch(c.conn, c.ZKPath(brokerIDsPath))
			return false, ev, err
		}
		ids = parseIDs(names)
		return len(ids) == n, ev, err
	})
	if err != nil {
		return ids, fmt.Errorf("%w (registered: %v)", err, ids)
	}
	return ids, nil
}

// Controller reads /controller: the id of the broker that is controller,
// or -1 when there is none.
func (c *Cluster) Controller() (int32, error) {
	data, _, err := c.conn.Get(c.ZKPath("/controller"))
	if errors.Is(err, zk.ErrNoNode) {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("testkit: reading /controller: %w", err)
	}
	return parseControllerID(data)
}

// WaitForController waits, up to ReadyTimeout, until /controller names a
// broker that is not one of except (a controller that was just killed),
// woken by a watch; it returns that broker's id.
func (c *Cluster) WaitForController(except ...int32) (int32, error) {
	id := int32(-1)
	err := c.waitZK(fmt.Sprintf("a controller other than %v", except), func() (bool, <-chan zk.Event, error) {
		data, _, ev, err := c.conn.GetW(c.ZKPath("/controller"))
		if errors.Is(err, zk.ErrNoNode) {
			id = -1
			ev, err := existsWatch(c.conn, c.ZKPath("/controller"))
			return false, ev, err
		}
		if err != nil {
			return false, nil, err
		}
		if id, err = parseControllerID(data); err != nil {
			return false, nil, err
		}
		return !slices.Contains(except, id), ev, nil
	})
	return id, err
}

// existsWatch sets a watch for path's creation, after a read found it
// missing. If it was created in between, the watch would only fire on
// its next change (perhaps never), so it returns no watch then, and the
// caller checks again after a short pause.
func existsWatch(conn *zk.Conn, path string) (<-chan zk.Event, error) {
	ok, _, ev, err := conn.ExistsW(path)
	if err != nil || ok {
		return nil, err
	}
	return ev, nil
}

// parseControllerID reads "brokerid" from /controller's JSON
// ({"version":..,"brokerid":N,"timestamp":".."}) without depending on
// the rest of its shape.
func parseControllerID(data []byte) (int32, error) {
	s := string(data)
	_, rest, ok := strings.Cut(s, `"brokerid":`)
	if !ok {
		return -1, fmt.Errorf("testkit: /controller holds %q: no brokerid", s)
	}
	end := strings.IndexAny(rest, ",}")
	if end < 0 {
		end = len(rest)
	}
	id, err := strconv.ParseInt(strings.TrimSpace(rest[:end]), 10, 32)
	if err != nil {
		return -1, fmt.Errorf("testkit: /controller holds %q: %w", s, err)
	}
	return int32(id), nil
}

// waitZK calls check until it reports done, waiting between calls for
// the watch it set (or, when it set none, a short pause), for at most
// ReadyTimeout. what names the awaited state in the error.
func (c *Cluster) waitZK(what string, check func() (done bool, ev <-chan zk.Event, err error)) error {
	deadline := time.NewTimer(c.cfg.ReadyTimeout)
	defer deadline.Stop()
	for {
		done, ev, err := check()
		if done {
			return nil
		}
		if err != nil {
			// A lost session or connection: retry until the deadline.
			ev = nil
		}
		var pause <-chan time.Time
		if ev == nil {
			pause = time.After(50 * time.Millisecond)
		}
		select {
		case <-ev:
		case <-pause:
		case <-deadline.C:
			if err != nil {
				return fmt.Errorf("testkit: no %s within %v: %w", what, c.cfg.ReadyTimeout, err)
			}
			return fmt.Errorf("testkit: no %s within %v", what, c.cfg.ReadyTimeout)
		}
	}
}

// brokerDir is where broker id keeps its files.
func (c *Cluster) brokerDir(id int32) string {
	return filepath.Join(c.dir, "broker-"+strconv.Itoa(int(id)))
}
