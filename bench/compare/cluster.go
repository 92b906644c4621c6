package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/testkit/procstat"
)

// ClusterBrokers is how many brokers every replicated system runs.
const ClusterBrokers = 3

// ClusterConfig is one replicated system under test: ClusterBrokers
// brokers on one new ZooKeeper, started by testkit.LaunchCluster from the
// same generated server.properties whatever the kind.
type ClusterConfig struct {
	Name       string // "samsa-cluster", "samsa-cluster-noflush", "kafka39-cluster"
	Broker     string // "samsa" or "kafka"
	Settings   string // for the report
	Durable    bool   // acknowledges only after fsync (on every ISR member)
	Kind       testkit.ClusterKind
	Binary     string            // samsa executable (Kind Samsa)
	Properties map[string]string // added to every broker's server.properties
	JVMOptions []string          // Kind Kafka39, after testkit.KafkaJVMOptions
	// Output, when set, receives everything the brokers print (Kafka's
	// INFO log: ISR changes, leader moves), to tell a slow figure from a
	// misbehaving cluster.
	Output io.Writer
}

// ClusterJVMOptions undo the testkit's test-only JVM choices (serial
// collector, C1 compiler only, 256 MiB heap: quick starts for tests) and
// give each Kafka 3.9.1 broker the same JVM as the single-node Kafka
// (JVMOptions), so the JIT compiler and collector are those a production
// broker runs with. Later options win over earlier ones in HotSpot.
var ClusterJVMOptions = append([]string{"-XX:-UseSerialGC", "-XX:TieredStopAtLevel=4"}, JVMOptions...)

// SamsaClusterConfig is three `samsa serve` brokers with extra
// server.properties lines.
func SamsaClusterConfig(name, binary string, durable bool, props map[string]string) ClusterConfig {
	settings := "samsa defaults (samsa.log.flush.policy=group: fsync before acknowledging, on the leader and every follower)"
	if len(props) > 0 {
		settings = "samsa " + joinProps(props)
	}
	return ClusterConfig{Name: name, Broker: "samsa", Settings: settings, Durable: durable, Kind: testkit.Samsa,
		Binary: binary, Properties: props}
}

// Kafka39ClusterConfig is three Apache Kafka 3.9.1 brokers in ZooKeeper
// mode with extra server.properties lines.
func Kafka39ClusterConfig(name string, durable bool, props map[string]string) ClusterConfig {
	settings := "Kafka " + testkit.Kafka39Version + " defaults (acknowledged once every ISR member has it in its page cache)"
	if len(props) > 0 {
		settings = "Kafka " + testkit.Kafka39Version + " " + joinProps(props)
	}
	settings += "; JVM " + strings.Join(JVMOptions[:4], " ") + ", C2"
	return ClusterConfig{Name: name, Broker: "kafka", Settings: settings, Durable: durable, Kind: testkit.Kafka39,
		Properties: props, JVMOptions: ClusterJVMOptions}
}

func joinProps(props map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		parts = append(parts, k+"="+props[k])
	}
	return strings.Join(parts, ", ")
}

// RunningCluster is a started replicated system.
type RunningCluster struct {
	Config ClusterConfig
	Ready  time.Duration // launch to every broker registered and in every broker's metadata
	c      *testkit.Cluster
}

// StartCluster launches c and waits until every broker knows every other
// (at most timeout).
func StartCluster(ctx context.Context, c ClusterConfig, timeout time.Duration) (*RunningCluster, error) {
	begin := time.Now()
	tc, err := testkit.LaunchCluster(testkit.ClusterConfig{Kind: c.Kind, Brokers: ClusterBrokers, Binary: c.Binary,
		Properties: maps.Clone(c.Properties), JVMOptions: c.JVMOptions, Output: c.Output,
		// Three JVMs starting at once on a small shared machine can
		// take longer than the testkit's minute.
		ReadyTimeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("compare: starting %s: %w", c.Name, err)
	}
	rc := &RunningCluster{Config: c, c: tc}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, addr := range tc.Addrs() {
		// Each broker answers Metadata from its own cache, which learns
		// of the others from the controller: wait until every one does.
		if err := waitMetadata(wctx, addr, func(m *kmsg.MetadataResponse) bool { return len(m.Brokers) == ClusterBrokers }); err != nil {
			_ = rc.Stop() // the wait's error is the one worth reporting
			return nil, fmt.Errorf("compare: %s: broker %s never listed %d brokers: %w", c.Name, addr, ClusterBrokers, err)
		}
	}
	rc.Ready = time.Since(begin)
	return rc, nil
}

// Addrs are the brokers' bootstrap addresses.
func (rc *RunningCluster) Addrs() []string { return rc.c.Addrs() }

// Usage samples every broker's CPU and memory now, in broker order.
func (rc *RunningCluster) Usage() ([]procstat.Usage, error) {
	var out []procstat.Usage
	for _, b := range rc.c.Brokers() {
		u, err := procstat.Read(b.PID())
		if err != nil {
			return nil, fmt.Errorf("compare: %s broker %d: %w", rc.Config.Name, b.ID(), err)
		}
		out = append(out, u)
	}
	return out, nil
}

// Stop stops every broker and the ZooKeeper and removes their data.
func (rc *RunningCluster) Stop() error { return rc.c.Close() }

// ReplicatedTopic creates topic with partitions partitions, replication
// factor ClusterBrokers and min.insync.replicas 2, and waits until every
// partition has a leader and all its replicas in the ISR, so that no
// measurement includes the followers' first catch-up.
func (rc *RunningCluster) ReplicatedTopic(ctx context.Context, topic string, partitions int32) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a stuck ISR should fail the workload, not eat its ten minutes
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(rc.Addrs()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, ClusterBrokers,
		map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("compare: creating %s on %s: %w", topic, rc.Config.Name, err)
	}
	for _, addr := range rc.Addrs() {
		if err := waitMetadata(ctx, addr, func(m *kmsg.MetadataResponse) bool { return fullyReplicated(m, topic, partitions) }, topic); err != nil {
			return fmt.Errorf("compare: %s on %s: not every partition led with a full ISR, as seen by %s: %w", topic, rc.Config.Name, addr, err)
		}
	}
	return nil
}

// fullyReplicated reports whether m shows topic with partitions
// partitions, each with a leader and ClusterBrokers replicas in sync.
func fullyReplicated(m *kmsg.MetadataResponse, topic string, partitions int32) bool {
	for _, t := range m.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if t.ErrorCode != 0 || int32(len(t.Partitions)) != partitions {
			return false
		}
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 || len(p.ISR) != ClusterBrokers {
				return false
			}
		}
		return true
	}
	return false
}

// waitMetadata asks the broker at addr, and only it, for metadata about
// topics until done holds or ctx ends: each broker answers from its own
// cache, and a client would ask whichever broker it liked.
func waitMetadata(ctx context.Context, addr string, done func(*kmsg.MetadataResponse) bool, topics ...string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	seed := cl.SeedBrokers()[0]
	var last error
	for {
		req := kmsg.NewPtrMetadataRequest()
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, seed)
		if err == nil && done(resp) {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond): // no event says "metadata changed"
		}
	}
}
