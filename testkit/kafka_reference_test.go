package testkit

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReferenceEnv names the environment variable that turns on
// TestKafka39Reference and says where it writes what it observed.
const referenceEnv = "SAMSA_KAFKA39_REFERENCE"

// referenceLog4j logs every request each broker completes, with header,
// body and response (kafka.request.logger at TRACE), and the controller's
// and state change logs, into files in the broker's directory.
const referenceLog4j = `log4j.logger.kafka.request.logger=TRACE, requests
log4j.additivity.kafka.request.logger=false
log4j.appender.requests=org.apache.log4j.FileAppender
log4j.appender.requests.File=${kafka.logs.dir}/kafka-request.log
log4j.appender.requests.layout=org.apache.log4j.PatternLayout
log4j.appender.requests.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=TRACE, statechange
log4j.additivity.state.change.logger=false
log4j.appender.statechange=org.apache.log4j.FileAppender
log4j.appender.statechange.File=${kafka.logs.dir}/state-change.log
log4j.appender.statechange.layout=org.apache.log4j.PatternLayout
log4j.appender.statechange.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.controller=TRACE, controller
log4j.additivity.kafka.controller=false
log4j.appender.controller=org.apache.log4j.FileAppender
log4j.appender.controller.File=${kafka.logs.dir}/controller.log
log4j.appender.controller.layout=org.apache.log4j.PatternLayout
log4j.appender.controller.layout.ConversionPattern=[%d] %p %m (%c)%n
`

// TestKafka39Reference records how Apache Kafka 3.9.1 in ZooKeeper mode
// behaves, as the reference for samsa's cluster mode: a 3-broker cluster
// goes through startup, topic creation, idempotent produce and an offset
// commit, config changes, a topic deletion, a broker kill and restart, a
// controlled shutdown and a controller failover. After each phase it
// saves the requests each broker received (from kafka.request.logger)
// and, at some, every znode. It also saves the ApiVersions a broker
// advertises and, per znode kind, the exact bytes Kafka wrote. It runs
// only when SAMSA_KAFKA39_REFERENCE names an output directory;
// docs/cluster-reference.md is written from its output.
func TestKafka39Reference(t *testing.T) {
	out := os.Getenv(referenceEnv)
	if out == "" {
		t.Skipf("skipped: set %s=<dir> to record Kafka %s's znodes and inter-broker requests", referenceEnv, Kafka39Version)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	c := StartCluster(t, ClusterConfig{Kind: Kafka39, Brokers: 3, Log4j: referenceLog4j,
		Properties: map[string]string{
			"offsets.topic.num.partitions": "3", // the default 50 only makes the logs longer
			"replica.lag.time.max.ms":      "5000",
		}})
	r := &recorder{t: t, c: c, out: out, offsets: map[int32]int64{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cl := NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.ClientID("reference-test"))
	adm := kadm.NewClient(cl)
	all := []int32{1, 2, 3}

	r.endPhase("01-startup")
	r.apiVersions(ctx, cl)
	r.dump("01-startup")

	resp, err := adm.CreateTopics(ctx, 3, 3, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "min.insync.replicas": kadm.StringPtr("2"),
		"segment.bytes": kadm.StringPtr("1048576")}, "ref-a")
	must(t, err, resp.Error())
	resp, err = adm.CreateTopics(ctx, 1, 3, map[string]*string{"retention.ms": kadm.StringPtr("60000")}, "ref-b")
	must(t, err, resp.Error())
	replicatedOnN(t, ctx, adm, "ref-a", 3, all)
	replicatedOnN(t, ctx, adm, "ref-b", 1, all)
	r.endPhase("02-create-topics")

	prod := NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.ClientID("reference-producer"), kgo.DefaultProduceTopic("ref-b"))
	if err := prod.ProduceSync(ctx, kgo.StringRecord("one"), kgo.StringRecord("two")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "ref-b", Partition: 0, At: 2, LeaderEpoch: -1})
	if cr, err := adm.CommitOffsets(ctx, "reference-group", offsets); err != nil || cr.Error() != nil {
		t.Fatalf("commit: %v %v", err, cr.Error())
	}
	r.endPhase("03-produce-and-commit")

	ar, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("86400000")}}, "ref-a")
	must(t, err, firstAlterErr(ar))
	ar, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.cleaner.threads", Value: kadm.StringPtr("2")}}, 1)
	must(t, err, firstAlterErr(ar))
	ar, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: kadm.StringPtr("604800001")}})
	must(t, err, firstAlterErr(ar))
	r.endPhase("04-alter-configs")
	r.dump("04-after-alter-configs")

	marker := c.ZKPath("/admin/delete_topics/ref-b")
	_, _, markerEv, err := c.ZooKeeperConn().ExistsW(marker)
	if err != nil {
		t.Fatal(err)
	}
	if dr, err := adm.DeleteTopic(ctx, "ref-b"); err != nil || dr.Err != nil {
		t.Fatalf("delete: %v %v", err, dr.Err)
	}
	select { // the deletion marker, caught while it exists
	case <-markerEv:
		if data, st, err := c.ZooKeeperConn().Get(marker); err == nil {
			r.golden("delete-topic-marker", marker, data, st)
		} else {
			t.Logf("deletion marker gone before it could be read: %v", err)
		}
	case <-ctx.Done():
	}
	r.waitGone(c.ZKPath("/brokers/topics/ref-b"), marker)
	r.endPhase("05-delete-topic")
	r.dump("05-after-delete-topic")

	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}
	victim := c.BrokerByID(ctl%3 + 1)
	victim.Kill()
	if _, err := c.WaitForBrokers(2); err != nil {
		t.Fatal(err)
	}
	replicatedOnN(t, ctx, adm, "ref-a", 3, without(all, victim.ID()))
	r.endPhase("06-kill-broker")
	r.dump("06-after-kill-broker")

	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	replicatedOnN(t, ctx, adm, "ref-a", 3, all)
	r.endPhase("07-restart-killed-broker")

	if err := victim.Stop(); err != nil {
		t.Fatal(err)
	}
	r.endPhase("08-controlled-shutdown")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	replicatedOnN(t, ctx, adm, "ref-a", 3, all)
	r.endPhase("09-start-after-shutdown")

	c.BrokerByID(ctl).Kill()
	next, err := c.WaitForController(ctl)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("controller %d killed, %d elected", ctl, next)
	replicatedOnN(t, ctx, adm, "ref-a", 3, without(all, ctl))
	r.endPhase("10-controller-failover")
	r.dump("10-after-controller-failover")

	if err := c.BrokerByID(ctl).Start(); err != nil {
		t.Fatal(err)
	}
	replicatedOnN(t, ctx, adm, "ref-a", 3, all)
	r.endPhase("11-old-controller-back")
	r.dump("11-final")
	r.saveGolden()
	for _, b := range c.Brokers() {
		for _, f := range []string{"controller.log", "state-change.log"} {
			copyFile(t, filepath.Join(b.Dir(), f), filepath.Join(out, "logs", fmt.Sprintf("broker-%d-%s", b.ID(), f)))
		}
		copyFile(t, b.PropertiesFile(), filepath.Join(out, "logs", fmt.Sprintf("broker-%d-server.properties", b.ID())))
	}
}

func must(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func firstAlterErr(rs kadm.AlterConfigsResponses) error {
	for _, r := range rs {
		if r.Err != nil {
			return fmt.Errorf("%s: %w (%s)", r.Name, r.Err, r.ErrMessage)
		}
	}
	return nil
}

func without(ids []int32, id int32) []int32 {
	return slices.DeleteFunc(slices.Clone(ids), func(x int32) bool { return x == id })
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Logf("copy: %v", err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// recorder cuts the brokers' request logs into phases and dumps znodes.
type recorder struct {
	t       *testing.T
	c       *Cluster
	out     string
	offsets map[int32]int64 // per broker, how much of kafka-request.log earlier phases took
	golds   map[string]goldenNode
}

// loggedRequest is what the summary keeps of one "Completed request"
// line.
type loggedRequest struct {
	Receiver int32  `json:"receiver"`
	API      string `json:"api"`
	Key      int16  `json:"apiKey"`
	Version  int16  `json:"apiVersion"`
	ClientID string `json:"clientId"`
	Count    int    `json:"count"`
}

// requestLine is the part of kafka.request.logger's JSON the summary
// reads.
type requestLine struct {
	RequestHeader struct {
		RequestAPIKey     int16  `json:"requestApiKey"`
		RequestAPIVersion int16  `json:"requestApiVersion"`
		CorrelationID     int32  `json:"correlationId"`
		ClientID          string `json:"clientId"`
		RequestAPIKeyName string `json:"requestApiKeyName"`
	} `json:"requestHeader"`
}

// endPhase waits until the inter-broker requests have stopped for a
// moment (the controller's sends trail the change that caused them),
// then saves what each broker received since the previous phase: the raw
// lines (Fetch elided after its first line per broker and client, it
// repeats every few hundred ms) and a summary.
func (r *recorder) endPhase(name string) {
	r.t.Helper()
	r.settle()
	dir := filepath.Join(r.out, "requests")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	var summary []loggedRequest
	var raw strings.Builder
	for _, b := range r.c.Brokers() {
		lines, end := r.readRequests(b, r.offsets[b.ID()])
		r.offsets[b.ID()] = end
		seenFetch := map[string]bool{}
		idx := map[string]int{}
		for _, line := range lines {
			var rl requestLine
			if err := json.Unmarshal([]byte(requestJSON(line)), &rl); err != nil {
				continue
			}
			h := rl.RequestHeader
			if h.RequestAPIKeyName == "FETCH" {
				if seenFetch[h.ClientID] {
					continue
				}
				seenFetch[h.ClientID] = true
			}
			fmt.Fprintf(&raw, "broker %d: %s\n", b.ID(), line)
			k := fmt.Sprintf("%d/%s/%d/%s", b.ID(), h.RequestAPIKeyName, h.RequestAPIVersion, h.ClientID)
			if j, ok := idx[k]; ok {
				summary[j].Count++
				continue
			}
			idx[k] = len(summary)
			summary = append(summary, loggedRequest{Receiver: b.ID(), API: h.RequestAPIKeyName, Key: h.RequestAPIKey,
				Version: h.RequestAPIVersion, ClientID: h.ClientID, Count: 1})
		}
	}
	writeJSON(r.t, filepath.Join(dir, name+".summary.json"), summary)
	if err := os.WriteFile(filepath.Join(dir, name+".log"), []byte(raw.String()), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func requestJSON(line string) string {
	_, rest, ok := strings.Cut(line, "Completed request:")
	if !ok {
		return ""
	}
	return strings.TrimSuffix(rest, " (kafka.request.logger)")
}

// readRequests returns the complete lines of b's request log after
// offset, and the offset after them.
func (r *recorder) readRequests(b *ClusterBroker, offset int64) ([]string, int64) {
	f, err := os.Open(filepath.Join(b.Dir(), "kafka-request.log"))
	if err != nil {
		return nil, offset
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		r.t.Fatal(err)
	}
	var lines []string
	rd := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break // a partial last line waits for the next phase
		}
		offset += int64(len(line))
		lines = append(lines, strings.TrimRight(line, "\n"))
	}
	return lines, offset
}

// settle polls, with a deadline, until no broker's request log has
// gained a line other than Fetch, Metadata or ApiVersions for 2 s.
func (r *recorder) settle() {
	deadline := time.Now().Add(60 * time.Second)
	quietSince := time.Now()
	last := -1
	// A recording tool's poll: it waits for quiet, it orders nothing.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for ; time.Now().Before(deadline); <-tick.C {
		n := 0
		for _, b := range r.c.Brokers() {
			lines, _ := r.readRequests(b, r.offsets[b.ID()])
			for _, l := range lines {
				if !strings.Contains(l, `"requestApiKeyName":"FETCH"`) && !strings.Contains(l, `"requestApiKeyName":"METADATA"`) &&
					!strings.Contains(l, `"requestApiKeyName":"API_VERSIONS"`) {
					n++
				}
			}
		}
		if n != last {
			last, quietSince = n, time.Now()
		} else if time.Since(quietSince) >= 2*time.Second {
			return
		}
	}
	r.t.Logf("request logs still moving after 60s")
}

// znode is one node of a dump.
type znode struct {
	Path           string `json:"path"`
	Ephemeral      bool   `json:"ephemeral"`
	EphemeralOwner string `json:"ephemeralOwner,omitempty"`
	Version        int32  `json:"version"`
	Cversion       int32  `json:"cversion"`
	Czxid          int64  `json:"czxid"`
	Mzxid          int64  `json:"mzxid"`
	Data           string `json:"data"`
	DataBase64     bool   `json:"dataBase64,omitempty"`
	Children       int32  `json:"numChildren"`
}

// dump walks the whole ZooKeeper tree (ZooKeeper's own /zookeeper
// included) and saves it, in path order.
func (r *recorder) dump(name string) {
	r.t.Helper()
	conn := r.c.ZooKeeperConn()
	var nodes []znode
	var walk func(path string)
	walk = func(path string) {
		data, st, err := conn.Get(path)
		if err != nil {
			return // deleted while walking
		}
		n := znode{Path: path, Ephemeral: st.EphemeralOwner != 0, Version: st.Version, Cversion: st.Cversion,
			Czxid: st.Czxid, Mzxid: st.Mzxid, Children: st.NumChildren}
		if n.Ephemeral {
			n.EphemeralOwner = fmt.Sprintf("0x%x", st.EphemeralOwner)
		}
		if utf8.Valid(data) {
			n.Data = string(data)
		} else {
			n.Data, n.DataBase64 = base64.StdEncoding.EncodeToString(data), true
		}
		nodes = append(nodes, n)
		r.noteGolden(path, data, st)
		kids, _, err := conn.Children(path)
		if err != nil {
			return
		}
		sort.Strings(kids)
		for _, k := range kids {
			if path == "/" {
				walk("/" + k)
			} else {
				walk(path + "/" + k)
			}
		}
	}
	walk("/")
	writeJSON(r.t, filepath.Join(r.out, "znodes", name+".json"), nodes)
}

// waitGone waits, on watches, until every path is gone.
func (r *recorder) waitGone(paths ...string) {
	r.t.Helper()
	for _, p := range paths {
		err := r.c.waitZK(p+" deleted", func() (bool, <-chan zk.Event, error) {
			ok, _, ev, err := r.c.ZooKeeperConn().ExistsW(p)
			return err == nil && !ok, ev, err
		})
		if err != nil {
			r.t.Fatal(err)
		}
	}
}

// goldenNode is one znode's data kept as a golden file.
type goldenNode struct {
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	Ephemeral bool   `json:"ephemeral"`
	Version   int32  `json:"version"`
	data      []byte
}

// goldenKinds names, per znode kind, the path whose data is kept as
// that kind's golden file; each dump overwrites, so the last state seen
// is kept.
var goldenKinds = map[string]string{
	"/brokers/ids/1":        "broker-registration",
	"/controller":           "controller",
	"/controller_epoch":     "controller-epoch",
	"/cluster/id":           "cluster-id",
	"/brokers/topics/ref-a": "topic-assignment",
	"/brokers/topics/ref-a/partitions/0/state": "partition-state",
	"/brokers/topics/__consumer_offsets":       "offsets-topic-assignment",
	"/config/topics/ref-a":                     "topic-config",
	"/config/topics/__consumer_offsets":        "offsets-topic-config",
	"/config/brokers/1":                        "broker-config",
	"/config/brokers/<default>":                "broker-default-config",
	"/config/changes/config_change_0000000000": "config-change",
	"/latest_producer_id_block":                "producer-id-block",
	"/feature":                                 "feature",
	"/brokers/seqid":                           "broker-seqid",
}

// noteGolden keeps path's data if it is a golden kind.
func (r *recorder) noteGolden(path string, data []byte, st *zk.Stat) {
	if kind, ok := goldenKinds[strings.TrimPrefix(path, r.c.cfg.Chroot)]; ok {
		r.golden(kind, path, data, st)
	}
}

func (r *recorder) golden(kind, path string, data []byte, st *zk.Stat) {
	if r.golds == nil {
		r.golds = map[string]goldenNode{}
	}
	r.golds[kind] = goldenNode{Kind: kind, Path: path, Ephemeral: st.EphemeralOwner != 0, Version: st.Version, data: data}
}

// saveGolden writes each kind's bytes as <kind>.json (exactly what
// Kafka stored) and an index of where each came from.
func (r *recorder) saveGolden() {
	dir := filepath.Join(r.out, "golden")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	var index []goldenNode
	for _, k := range slices.Sorted(maps.Keys(r.golds)) {
		g := r.golds[k]
		if err := os.WriteFile(filepath.Join(dir, k+".json"), g.data, 0o644); err != nil {
			r.t.Fatal(err)
		}
		index = append(index, g)
	}
	writeJSON(r.t, filepath.Join(r.out, "golden-index.json"), index)
}

// apiVersions saves the ApiVersions answer of every broker.
func (r *recorder) apiVersions(ctx context.Context, cl *kgo.Client) {
	r.t.Helper()
	for _, b := range r.c.Brokers() {
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-reference", "1"
		resp, err := cl.Broker(int(b.ID())).Request(ctx, req)
		if err != nil {
			r.t.Fatal(err)
		}
		writeJSON(r.t, filepath.Join(r.out, fmt.Sprintf("apiversions-broker-%d.json", b.ID())), resp)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
