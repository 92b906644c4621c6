// Package testkit is what samsa's own tests, and users' tests, use to run
// samsa and its neighbours: a broker in the test's process or as a real
// process, a ZooKeeper server, and the small helpers around them.
//
// # In-process brokers
//
// StartInProcess(t, kv...) runs a broker inside the test: actors.NewBroker
// behind a netloop listener on a free 127.0.0.1 port, started and stopped
// through internal/wiring, the code `samsa serve` runs, so only the flags,
// signals and process are missing. kv are server.properties keys and
// values in pairs; log.dirs defaults to a new t.TempDir(), the broker logs
// nothing and runs one event loop. Its Broker, Server (netloop's counters)
// and Addr (the advertised host:port) are fields; Client and Admin make
// franz-go clients seeded with Addr; Close stops it as SIGTERM would
// (listeners first, then every log closed cleanly; an error fails the
// test; it also runs when the test ends); Restart starts it again on the
// same data on a new port. It is the broker of the actors package's
// external tests (package actors_test). Tests inside package actors that
// need its unexported seams (Options) cannot import testkit, which
// imports actors; they keep their own startBroker.
//
// # Broker processes
//
// StartBroker(t, BrokerConfig{}) runs `samsa serve` as a child process on
// a free 127.0.0.1 port with a temporary data directory, and returns once
// the broker has printed its listening line
//
//	samsa: listening on 127.0.0.1:PORT (PLAINTEXT), data in DIR
//
// and accepted a TCP connection. Point any Kafka client at b.Addr(). When
// the test ends the broker gets SIGTERM and must exit with status 0 (else
// the test fails), the temporary directory is removed, and if the test
// failed the broker's output (stdout and stderr, kept in memory) is
// written to the test log. LaunchBroker is the same without a test, for
// TestMain or programs; LogOnFailure(t) attaches a shared broker's output
// to each test that uses it.
//
// The binary comes from SamsaBinary: `go build` of cmd/samsa, once per
// test binary (a sync.Once), into $TMPDIR/samsa-testkit-UID/samsa-PID;
// binaries of test processes that have exited are removed by the next
// build. Set SAMSA_BINARY to use a prebuilt binary instead, or
// SAMSA_TESTKIT_BUILD_FLAGS=-race to run the broker under the race
// detector (a race makes it exit non-zero, which Stop reports).
//
// Fault injection and inspection: Stop (SIGTERM, wait, exit status 0),
// Kill (SIGKILL, as a crash), Start (again, same port and data), Restart
// (Stop then Start), PID, Usage (CPU seconds, VmRSS and VmHWM from /proc, through
// testkit/procstat), StartupTime (process start to
// first accepted connection), Output / OutputMark / OutputSince (what the
// broker printed, for assertions on log lines). A given DataDir lets a
// test start a broker on data it prepared or corrupted.
//
// # ZooKeeper
//
// StartZooKeeper(t, ZooKeeperConfig{}) runs Debian's ZooKeeper
// (/usr/share/java/zookeeper.jar, package zookeeper) in a JVM on a free
// loopback port with a temporary data directory and a 500 ms tick, so
// sessions can expire in about a second. It is ready when the `srvr`
// four-letter command reports a Mode (its `ruok` answers before the server
// accepts sessions). Freeze/Thaw (SIGSTOP/SIGCONT) make sessions time out
// as on a hung server. The admin HTTP server is disabled.
//
// # Clusters
//
// StartCluster(t, ClusterConfig{Kind: Samsa or Kafka39, Brokers: 3})
// runs one ZooKeeper and N brokers (broker.id 1..N) as child processes,
// each with its own server.properties in Dir(): the same keys for both
// kinds, so one file starts samsa (`samsa serve --config`) or Apache
// Kafka 3.9.1 (`java ... kafka.Kafka`). Each broker reaches ZooKeeper
// through its own faultproxy, so CutZooKeeper/HealZooKeeper and
// ExpireSession act on one broker's link; Kill (SIGKILL), Stop (SIGTERM),
// Start and Restart act on its process. The cluster's own ZooKeeper
// session (ZooKeeperConn) backs WaitForBrokers, Controller and
// WaitForController, which wait on watches.
//
// Listener makes the brokers' listener SSL, SASL_PLAINTEXT or SASL_SSL
// (also their inter-broker listener; its ssl.* and sasl.* keys go in
// Properties), ExtraListener adds a second one of another protocol on a
// port of its own (ExtraAddr, ExtraBootstrap). WriteTestCerts writes a CA
// and a broker certificate (PEM and PKCS#12) for programs that start such
// brokers outside a test.
//
// With BrokerLinks, each broker also listens on INTERNAL
// (InterBrokerListener, its inter.broker.listener.name) and advertises
// there the address of a router in the test process, so every connection
// between brokers (fetches, AlterPartition, the controller's requests)
// passes through the testkit, which tells the opener by the process
// holding the socket's other end. CutFromBrokers(id) resets and refuses
// every connection between broker id and the others, both directions,
// until HealBrokers(id); its ZooKeeper link and its clients' listener are
// untouched. BrokerLinkStats counts what each router forwarded and cut.
//
// ResolveKafka39 resolves Kafka 3.9.1's broker and tools from Maven
// Central (a generated pom, `mvn dependency:build-classpath`, the class
// path cached under os.UserCacheDir()); Kafka.ServerArgs and ToolArgs are
// the java command lines, Kafka.Run runs a tool such as
// Kafka39TopicCommand.
//
// # Prerequisites
//
// RequireTool and Require skip a test whose external prerequisite (kcat,
// ZooKeeper) is missing, with the reason, except in CI (CI=true), where
// `make test` has installed them and a missing one is a failure.
//
// # Threading
//
// An InProcess is used from the test's goroutine (its Broker and Server
// are safe for concurrent use as always). BrokerProcess and ZooKeeper
// methods are safe for concurrent use; a goroutine per child process
// waits for its exit and another copies its output. Children get SIGKILL if the test process dies (Pdeathsig).
//
// Linux only: /proc and Pdeathsig.
package testkit
