package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/zkmeta"
)

// goldenDir holds the znodes Kafka 3.9.1 wrote in ZooKeeper mode
// (recorded for docs/cluster-reference.md): <kind>.json is one znode's
// data, znodes/01-startup.json the whole tree after a 3-broker start.
const goldenDir = "../../zkmeta/testdata/kafka-3.9.1"

// znode is one node of a tree read from ZooKeeper.
type znode struct {
	data []byte
	stat *zk.Stat
}

// readTree reads every znode under root (a chrooted Kafka path such as
// "/"), keyed by its path relative to the chroot.
func readTree(t *testing.T, c *testkit.Cluster) map[string]znode {
	t.Helper()
	conn := c.ZooKeeperConn()
	tree := map[string]znode{}
	var walk func(p string)
	walk = func(p string) {
		data, st, err := conn.Get(c.ZKPath(p))
		if errors.Is(err, zk.ErrNoNode) {
			return // deleted while walking
		}
		if err != nil {
			t.Fatalf("get %s: %v", p, err)
		}
		tree[p] = znode{data: data, stat: st}
		children, _, err := conn.Children(c.ZKPath(p))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("children of %s: %v", p, err)
		}
		for _, ch := range children {
			walk(path.Join(p, ch))
		}
	}
	walk("/")
	return tree
}

// keys is the top-level keys of a JSON object, in the order written.
func keys(t *testing.T, what string, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not a JSON object: %q", what, data)
	}
	var out []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v in %q", what, err, data)
		}
		out = append(out, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("%s: %v in %q", what, err, data)
		}
	}
	return out
}

// golden reads Kafka 3.9.1's znode data of one kind.
func golden(t *testing.T, kind string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, kind+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(data)
}

// sameKeys fails t unless data has the keys of Kafka's znode of kind, in
// Kafka's order (every znode here is compact JSON written in a fixed
// order; docs/cluster-reference.md, "Quirks").
func sameKeys(t *testing.T, p string, data []byte, kind string) {
	t.Helper()
	got, want := keys(t, p, data), keys(t, kind, golden(t, kind))
	if !slices.Equal(got, want) {
		t.Errorf("%s: keys %v, Kafka 3.9.1 writes %v\n samsa: %s\n kafka: %s", p, got, want, data, golden(t, kind))
	}
	if bytes.ContainsAny(data, " \n") && !strings.HasPrefix(p, "/config/") {
		t.Errorf("%s: not compact JSON: %q", p, data)
	}
}

// TestZooKeeperLayout reads the whole tree the brokers wrote and checks
// it against Kafka 3.9.1's: the same persistent and ephemeral paths after
// start, each znode's JSON decoding with zkmeta's decoders and having
// Kafka's keys in Kafka's order, data versions where Kafka's are fixed,
// a topic's assignment, partition states and config, the deletion marker
// and the clean-up after a delete, the offsets topic, and the producer-id
// block an idempotent producer takes.
func TestZooKeeperLayout(t *testing.T) {
	c := sharedCluster(t)
	topic := name(t, "layout")
	adm := admin(t, c.Addrs())
	resp, err := adm.CreateTopic(deadline(t, 30*time.Second), 6, 3, map[string]*string{"retention.ms": kadm.StringPtr("86400000")}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	waitMetadata(t, c, 30*time.Second, func(_ int32, m *kmsg.MetadataResponse) error { return ledEverywhere(m, topic, 6) })
	// An idempotent producer (kgo's default) takes a producer-id block;
	// a group commit creates __consumer_offsets.
	produceValues(t, c.Addrs(), topic, []string{"a", "b", "c"})
	group := name(t, "g")
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: topic, Partition: 0, At: 1, LeaderEpoch: -1})
	commitAll(t, c, group, offsets)

	tree := readTree(t, c)
	ids, err := c.RegisteredBrokers()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("Startup", func(t *testing.T) {
		// Every znode Kafka 3.9.1 had after starting three brokers is
		// there, ephemeral where Kafka's is.
		raw, err := os.ReadFile(filepath.Join(goldenDir, "znodes", "01-startup.json"))
		if err != nil {
			t.Fatal(err)
		}
		var kafka []struct {
			Path      string `json:"path"`
			Ephemeral bool   `json:"ephemeral"`
			Data      string `json:"data"`
		}
		if err := json.Unmarshal(raw, &kafka); err != nil {
			t.Fatal(err)
		}
		for _, k := range kafka {
			if strings.HasPrefix(k.Path, "/zookeeper") {
				continue // the server's own
			}
			n, ok := tree[k.Path]
			if !ok {
				t.Errorf("%s: missing (Kafka 3.9.1 creates it at startup)", k.Path)
				continue
			}
			if got := n.stat.EphemeralOwner != 0; got != k.Ephemeral {
				t.Errorf("%s: ephemeral %v, Kafka's is %v", k.Path, got, k.Ephemeral)
			}
			if k.Data == "" && len(n.data) != 0 && k.Path != zkmeta.PathProducerIDBlock {
				t.Errorf("%s: holds %q, Kafka's is empty", k.Path, n.data)
			}
		}
	})

	t.Run("ClusterID", func(t *testing.T) {
		n := tree[zkmeta.PathClusterID]
		id, err := zkmeta.DecodeClusterID(n.data)
		if err != nil {
			t.Fatalf("%s %q: %v", zkmeta.PathClusterID, n.data, err)
		}
		if len(id) != 22 {
			t.Errorf("cluster id %q is not 22 characters of base64", id)
		}
		if !bytes.Contains(n.data, []byte(`"version":"1"`)) {
			t.Errorf("%s: %s, Kafka writes the version as the string \"1\"", zkmeta.PathClusterID, n.data)
		}
		sameKeys(t, zkmeta.PathClusterID, n.data, "cluster-id")
		meta, err := adm.BrokerMetadata(deadline(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if meta.Cluster != id {
			t.Errorf("Metadata cluster id %q, %s holds %q", meta.Cluster, zkmeta.PathClusterID, id)
		}
	})

	t.Run("Brokers", func(t *testing.T) {
		if !slices.Equal(ids, []int32{1, 2, 3}) {
			t.Fatalf("/brokers/ids: %v", ids)
		}
		for _, b := range c.Brokers() {
			p := zkmeta.PathBrokerIDs + "/" + strconv.Itoa(int(b.ID()))
			n := tree[p]
			if n.stat == nil {
				t.Errorf("%s missing", p)
				continue
			}
			if n.stat.EphemeralOwner == 0 {
				t.Errorf("%s is not ephemeral", p)
			}
			if n.stat.Version != 1 {
				t.Errorf("%s: data version %d, Kafka's registration is at 1", p, n.stat.Version)
			}
			info, err := zkmeta.DecodeBrokerInfo(b.ID(), n.data)
			if err != nil {
				t.Errorf("%s %q: %v", p, n.data, err)
				continue
			}
			var raw struct {
				Version   int               `json:"version"`
				Endpoints []string          `json:"endpoints"`
				Map       map[string]string `json:"listener_security_protocol_map"`
				Host      string            `json:"host"`
				Port      int               `json:"port"`
				JMX       int               `json:"jmx_port"`
				Timestamp string            `json:"timestamp"`
			}
			if err := json.Unmarshal(n.data, &raw); err != nil {
				t.Fatal(err)
			}
			host, port, _ := strings.Cut(b.Addr(), ":")
			if raw.Version != 5 || !slices.Equal(raw.Endpoints, []string{"PLAINTEXT://" + b.Addr()}) ||
				raw.Map["PLAINTEXT"] != "PLAINTEXT" || raw.Host != host || strconv.Itoa(raw.Port) != port || raw.JMX != -1 {
				t.Errorf("%s: %s, want version 5, endpoint PLAINTEXT://%s, the PLAINTEXT listener map, jmx_port -1", p, n.data, b.Addr())
			}
			if _, err := strconv.ParseInt(raw.Timestamp, 10, 64); err != nil {
				t.Errorf("%s: timestamp %q is not milliseconds in a string", p, raw.Timestamp)
			}
			if len(info.Endpoints) != 1 || strconv.Itoa(int(info.Endpoints[0].Port)) != port {
				t.Errorf("%s decodes to endpoints %+v", p, info.Endpoints)
			}
			sameKeys(t, p, n.data, "broker-registration")
		}
	})

	t.Run("Controller", func(t *testing.T) {
		n := tree[zkmeta.PathController]
		if n.stat == nil || n.stat.EphemeralOwner == 0 {
			t.Fatalf("%s missing or not ephemeral", zkmeta.PathController)
		}
		ctl, err := zkmeta.DecodeController(n.data)
		if err != nil {
			t.Fatalf("%s %q: %v", zkmeta.PathController, n.data, err)
		}
		if !slices.Contains(ids, ctl.BrokerID) || ctl.KRaftControllerEpoch != -1 {
			t.Errorf("%s: %s, want a registered broker and kraftControllerEpoch -1", zkmeta.PathController, n.data)
		}
		// The controller's session owns /controller: the one that owns
		// its broker registration.
		reg := tree[zkmeta.PathBrokerIDs+"/"+strconv.Itoa(int(ctl.BrokerID))]
		if reg.stat != nil && reg.stat.EphemeralOwner != n.stat.EphemeralOwner {
			t.Errorf("%s is owned by session 0x%x, broker %d's registration by 0x%x", zkmeta.PathController,
				n.stat.EphemeralOwner, ctl.BrokerID, reg.stat.EphemeralOwner)
		}
		sameKeys(t, zkmeta.PathController, n.data, "controller")
		e := tree[zkmeta.PathControllerEpoch]
		epoch, err := zkmeta.DecodeControllerEpoch(e.data)
		if err != nil {
			t.Fatalf("%s %q: %v", zkmeta.PathControllerEpoch, e.data, err)
		}
		// Created holding 0, then one set per election: Kafka's epoch and
		// data version go up together.
		if epoch < 1 || e.stat.Version != epoch {
			t.Errorf("%s: epoch %d at data version %d; Kafka's are equal and at least 1", zkmeta.PathControllerEpoch, epoch, e.stat.Version)
		}
	})

	t.Run("Topic", func(t *testing.T) {
		p := zkmeta.PathTopics + "/" + topic
		n := tree[p]
		a, err := zkmeta.DecodeTopicAssignment(topic, n.data)
		if err != nil {
			t.Fatalf("%s %q: %v", p, n.data, err)
		}
		sameKeys(t, p, n.data, "topic-assignment")
		var raw struct {
			TopicID string `json:"topic_id"`
		}
		if err := json.Unmarshal(n.data, &raw); err != nil || len(raw.TopicID) != 22 {
			t.Errorf("%s: topic_id %q is not a 22-character base64 UUID", p, raw.TopicID)
		}
		if len(a.Partitions) != 6 {
			t.Fatalf("%s: %d partitions, want 6", p, len(a.Partitions))
		}
		epoch, _ := zkmeta.DecodeControllerEpoch(tree[zkmeta.PathControllerEpoch].data)
		md, err := adm.Metadata(deadline(t, 10*time.Second), topic)
		if err != nil {
			t.Fatal(err)
		}
		mdParts := md.Topics[topic].Partitions
		for part, replicas := range a.Partitions {
			if got := slices.Compact(slices.Sorted(slices.Values(replicas))); !slices.Equal(got, []int32{1, 2, 3}) {
				t.Errorf("%s: partition %d on %v, want three distinct of 1..3", p, part, replicas)
			}
			sp := fmt.Sprintf("%s/partitions/%d/state", p, part)
			sn, ok := tree[sp]
			if !ok {
				t.Errorf("%s missing", sp)
				continue
			}
			for _, parent := range []string{p + "/partitions", fmt.Sprintf("%s/partitions/%d", p, part)} {
				if pn := tree[parent]; pn.stat == nil || len(pn.data) != 0 {
					t.Errorf("%s: missing or not empty (%q)", parent, pn.data)
				}
			}
			st, err := zkmeta.DecodePartitionState(sn.data)
			if err != nil {
				t.Errorf("%s %q: %v", sp, sn.data, err)
				continue
			}
			sameKeys(t, sp, sn.data, "partition-state")
			if !slices.Contains(replicas, st.Leader) || !slices.Contains(st.ISR, st.Leader) || st.ControllerEpoch < 1 || st.ControllerEpoch > epoch {
				t.Errorf("%s: %s (replicas %v, controller epoch %d)", sp, sn.data, replicas, epoch)
			}
			if mp, ok := mdParts[part]; !ok || mp.Leader != st.Leader || mp.LeaderEpoch != st.LeaderEpoch {
				t.Errorf("%s says leader %d epoch %d, Metadata %+v", sp, st.Leader, st.LeaderEpoch, mp)
			}
		}
		cp := zkmeta.PathConfig + "/topics/" + topic
		cfgNode, ok := tree[cp]
		if !ok {
			t.Fatalf("%s missing", cp)
		}
		cfg, err := zkmeta.DecodeEntityConfig(cfgNode.data)
		if err != nil {
			t.Fatalf("%s %q: %v", cp, cfgNode.data, err)
		}
		if cfg["retention.ms"] != "86400000" || len(cfg) != 1 {
			t.Errorf("%s: %s, want only the config set at creation (retention.ms=86400000)", cp, cfgNode.data)
		}
		sameKeys(t, cp, cfgNode.data, "topic-config")
	})

	t.Run("OffsetsTopic", func(t *testing.T) {
		p := zkmeta.PathTopics + "/__consumer_offsets"
		n, ok := tree[p]
		if !ok {
			t.Fatalf("%s missing after a group commit", p)
		}
		a, err := zkmeta.DecodeTopicAssignment("__consumer_offsets", n.data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sameKeys(t, p, n.data, "offsets-topic-assignment")
		if len(a.Partitions) != 50 {
			t.Errorf("__consumer_offsets has %d partitions, want offsets.topic.num.partitions' default 50", len(a.Partitions))
		}
		for part, replicas := range a.Partitions {
			if len(slices.Compact(slices.Sorted(slices.Values(replicas)))) != 3 {
				t.Errorf("__consumer_offsets-%d on %v, want offsets.topic.replication.factor 3", part, replicas)
			}
		}
		cp := zkmeta.PathConfig + "/topics/__consumer_offsets"
		cn, ok := tree[cp]
		if !ok {
			t.Fatalf("%s missing", cp)
		}
		cfg, err := zkmeta.DecodeEntityConfig(cn.data)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := zkmeta.DecodeEntityConfig(golden(t, "offsets-topic-config"))
		if fmt.Sprint(cfg) != fmt.Sprint(want) {
			t.Errorf("%s: %s, Kafka's is %s", cp, cn.data, golden(t, "offsets-topic-config"))
		}
	})

	t.Run("ProducerIDBlock", func(t *testing.T) {
		n := tree[zkmeta.PathProducerIDBlock]
		if len(n.data) == 0 {
			t.Fatalf("%s is empty after an idempotent producer ran", zkmeta.PathProducerIDBlock)
		}
		b, err := zkmeta.DecodeProducerIDBlock(n.data)
		if err != nil {
			t.Fatalf("%s %q: %v", zkmeta.PathProducerIDBlock, n.data, err)
		}
		if b.End-b.Start+1 != 1000 || b.Start%1000 != 0 || !slices.Contains(ids, b.Broker) {
			t.Errorf("%s: %s, want a block of 1000 ids (block_end inclusive) taken by a registered broker", zkmeta.PathProducerIDBlock, n.data)
		}
		sameKeys(t, zkmeta.PathProducerIDBlock, n.data, "producer-id-block")
	})

	t.Run("Feature", func(t *testing.T) {
		n := tree[zkmeta.PathFeature]
		if _, err := zkmeta.DecodeFeatures(n.data); err != nil {
			t.Fatalf("%s %q: %v", zkmeta.PathFeature, n.data, err)
		}
		sameKeys(t, zkmeta.PathFeature, n.data, "feature")
	})

	t.Run("Delete", func(t *testing.T) {
		victim := name(t, "doomed")
		createTopic(t, c, victim, 3, 3)
		conn := c.ZooKeeperConn()
		// A watch set before the delete sees the marker appear, however
		// quickly the controller removes it again.
		before, _, ev, err := conn.ChildrenW(c.ZKPath(zkmeta.PathDeleteTopics))
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(before, victim) {
			t.Fatalf("%s/%s exists before the delete", zkmeta.PathDeleteTopics, victim)
		}
		deleteTopic(t, c, victim)
		marker := zkmeta.PathDeleteTopics + "/" + victim
		select {
		case e := <-ev:
			if e.Type != zk.EventNodeChildrenChanged {
				t.Errorf("watch on %s: %v", zkmeta.PathDeleteTopics, e)
			}
			data, _, err := conn.Get(c.ZKPath(marker))
			switch {
			case errors.Is(err, zk.ErrNoNode):
				t.Logf("%s came and went before it could be read", marker)
			case err != nil:
				t.Fatal(err)
			case len(data) != 0:
				t.Errorf("%s holds %q; Kafka's marker is empty", marker, data)
			default:
				t.Logf("%s seen, empty as Kafka's", marker)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("no znode appeared under %s within 10s of DeleteTopics", zkmeta.PathDeleteTopics)
		}
		waitTopicGone(t, c, victim, 30*time.Second)
		// Once deletion is done the marker, the assignment (with its
		// partition states) and the config are gone, as in Kafka.
		for _, p := range []string{marker, zkmeta.PathTopics + "/" + victim, zkmeta.PathConfig + "/topics/" + victim} {
			waitZNodeGone(t, c, p, 30*time.Second)
		}
		waitNoPartitionDirs(t, c, victim, 30*time.Second)
	})
}

// waitZNodeGone waits, with a watch, until p (a Kafka path) is gone.
func waitZNodeGone(t *testing.T, c *testkit.Cluster, p string, d time.Duration) {
	t.Helper()
	end := time.After(d)
	for {
		ok, _, ev, err := c.ZooKeeperConn().ExistsW(c.ZKPath(p))
		if err != nil {
			t.Fatalf("exists %s: %v", p, err)
		}
		if !ok {
			return
		}
		select {
		case <-ev:
		case <-end:
			t.Fatalf("%s still exists %v after the topic was deleted", p, d)
		}
	}
}

// commitAll commits offsets for group through its coordinator, retrying
// while the coordinator is still loading (__consumer_offsets is created
// on the first FindCoordinator).
func commitAll(t *testing.T, c *testkit.Cluster, group string, offsets kadm.Offsets) {
	t.Helper()
	adm := kadm.NewClient(client(t, c.Addrs(), kgo.RetryTimeout(60*time.Second)))
	resp, err := adm.CommitOffsets(deadline(t, 60*time.Second), group, offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing for %s: %v", group, err)
	}
}

// TestProducerIDsUniqueAcrossBrokers: InitProducerId answered by
// different brokers hands out different producer ids. Leaders keep
// idempotence state by producer id, so two producers given one id by two
// brokers would have each other's batches refused or dropped as
// duplicates. Kafka makes ids unique by giving each broker blocks from
// the controller (AllocateProducerIds, /latest_producer_id_block).
func TestProducerIDsUniqueAcrossBrokers(t *testing.T) {
	c := sharedCluster(t)
	seen := map[int64]int32{}
	for round := range 2 {
		for _, b := range c.Brokers() {
			cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
			if err != nil {
				t.Fatal(err)
			}
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionTimeoutMillis = 60000
			req.ProducerID, req.ProducerEpoch = -1, -1
			resp, err := req.RequestWith(deadline(t, 10*time.Second), cl.SeedBrokers()[0])
			cl.Close()
			if err == nil {
				err = kerr.ErrorForCode(resp.ErrorCode)
			}
			if err != nil {
				t.Fatalf("InitProducerId on broker %d: %v", b.ID(), err)
			}
			if other, dup := seen[resp.ProducerID]; dup {
				t.Errorf("round %d: broker %d handed out producer id %d, which broker %d handed out before", round, b.ID(), resp.ProducerID, other)
			}
			seen[resp.ProducerID] = b.ID()
		}
	}
	t.Logf("producer ids: %v", seen)
}
