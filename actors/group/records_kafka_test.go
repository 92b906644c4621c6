package group

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kafkaClasspath finds Apache Kafka's jars (kafka-tools,
// kafka-group-coordinator and what they need) in the local Maven
// repository, or in $SAMSA_KAFKA_CLASSPATH. Empty when absent.
func kafkaClasspath() string {
	if cp := os.Getenv("SAMSA_KAFKA_CLASSPATH"); cp != "" {
		return cp
	}
	home, _ := os.UserHomeDir()
	repo := filepath.Join(home, ".m2", "repository")
	var jars []string
	for _, a := range []string{"kafka-tools", "kafka-group-coordinator", "kafka-coordinator-common", "kafka-clients", "kafka-server-common"} {
		m, _ := filepath.Glob(filepath.Join(repo, "org", "apache", "kafka", a, "4.*", a+"-4.*.jar"))
		if len(m) == 0 {
			return ""
		}
		jars = append(jars, m[len(m)-1])
	}
	for _, a := range []string{"jackson-databind", "jackson-core", "jackson-annotations", "jackson-datatype-jdk8"} {
		m, _ := filepath.Glob(filepath.Join(repo, "com", "fasterxml", "jackson", "*", a, "*", a+"-*.jar"))
		if len(m) == 0 {
			return ""
		}
		jars = append(jars, m[len(m)-1])
	}
	return strings.Join(jars, string(os.PathListSeparator))
}

// kafkaJava is the java binary and Kafka's classpath; it skips the test
// without them, and with -short (a JVM start takes seconds).
func kafkaJava(t *testing.T) (java, cp string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	java, err := exec.LookPath("java")
	cp = kafkaClasspath()
	if err != nil || cp == "" {
		t.Skip("java or the Kafka 4.x jars are not available")
	}
	return java, cp
}

// runKafkaProgram runs a single-file Java program of testdata with
// records on its standard input, one "hexKey hexValue" line each (value
// "-" for a tombstone), and returns its output.
func runKafkaProgram(t *testing.T, java, cp, program string, recs []Record) string {
	t.Helper()
	var in bytes.Buffer
	for _, r := range recs {
		v := "-"
		if r.Value != nil {
			v = hex.EncodeToString(r.Value)
		}
		in.WriteString(hex.EncodeToString(r.Key) + " " + v + "\n")
	}
	cmd := exec.Command(java, "-cp", cp, filepath.Join("testdata", program))
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java %s: %v\n%s", program, err, stderr.String())
	}
	return string(out)
}

// kafkaOutput splits a program's output: its "E" lines are records
// Kafka's classes wrote, returned in order; every other line goes to each
// as its first word and the rest.
func kafkaOutput(out string, each func(kind, rest string)) (kafkaRecords []Record) {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		kind, rest, _ := strings.Cut(line, " ")
		if kind == "E" {
			kafkaRecords = append(kafkaRecords, hexRecord(rest))
			continue
		}
		each(kind, rest)
	}
	return kafkaRecords
}

// hexRecord reads "hexKey hexValue" ("-": tombstone).
func hexRecord(s string) Record {
	k, v, _ := strings.Cut(s, " ")
	key, _ := hex.DecodeString(k)
	var val []byte
	if v != "-" {
		val, _ = hex.DecodeString(v)
	}
	return Record{key, val}
}

// TestRecordsAgainstKafka runs Apache Kafka's own record classes and its
// console-consumer formatters (a single-file Java program) on what this
// package writes, and decodes what Kafka writes. Skipped without Java or
// the jars, and with -short (a JVM start takes seconds).
func TestRecordsAgainstKafka(t *testing.T) {
	java, cp := kafkaJava(t)

	ours := []Record{
		{OffsetKeyBytes("sgroup", "stopic", 5), OffsetValueBytes(OffsetValue{Offset: 77, LeaderEpoch: 3, Metadata: "smeta", CommitTimestamp: 5555, ExpireTimestamp: -1})},
		{OffsetKeyBytes("sgroup", "stopic", 6), OffsetValueBytes(OffsetValue{Offset: 78, LeaderEpoch: -1, Metadata: "", CommitTimestamp: 5556, ExpireTimestamp: 9999})},
		{OffsetKeyBytes("sgroup", "stopic", 7), nil},
		{GroupKeyBytes("sgroup"), GroupValueBytes(sampleGroupValue())},
		{GroupKeyBytes("sgroup"), GroupValueBytes(GroupValue{ProtocolType: "consumer", Generation: 8, CurrentStateTimestamp: 1})},
		{GroupKeyBytes("sgroup"), nil},
	}
	out := runKafkaProgram(t, java, cp, "KafkaRecords.java", ours)

	var formatted []map[string]any
	kafkaRecords := kafkaOutput(out, func(kind, rest string) {
		if kind != "O" && kind != "G" {
			return
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(rest), &m); err != nil {
			t.Fatalf("formatter output %q: %v", rest, err)
		}
		m["formatter"] = kind
		formatted = append(formatted, m)
	})

	// Kafka's formatters read ours.
	if len(formatted) != len(ours) {
		t.Fatalf("Kafka formatted %d of %d records:\n%s", len(formatted), len(ours), out)
	}
	str := func(m map[string]any, path ...string) any {
		var cur any = m
		for _, p := range path {
			cm, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = cm[p]
		}
		return cur
	}
	checks := []struct {
		rec  int
		path []string
		want any
	}{
		{0, []string{"formatter"}, "O"},
		{0, []string{"key", "data", "group"}, "sgroup"},
		{0, []string{"key", "data", "partition"}, 5.0},
		{0, []string{"value", "version"}, 3.0},
		{0, []string{"value", "data", "offset"}, 77.0},
		{0, []string{"value", "data", "leaderEpoch"}, 3.0},
		{0, []string{"value", "data", "metadata"}, "smeta"},
		{0, []string{"value", "data", "commitTimestamp"}, 5555.0},
		{1, []string{"value", "version"}, 1.0},
		{1, []string{"value", "data", "expireTimestamp"}, 9999.0},
		{2, []string{"value"}, nil},
		{3, []string{"formatter"}, "G"},
		{3, []string{"value", "version"}, 3.0},
		{3, []string{"value", "data", "generation"}, 7.0},
		{3, []string{"value", "data", "leader"}, "c-1"},
		{3, []string{"value", "data", "protocol"}, "range"},
		{3, []string{"value", "data", "currentStateTimestamp"}, 12345.0},
		{4, []string{"value", "data", "leader"}, nil},
		{5, []string{"value"}, nil},
	}
	for _, c := range checks {
		if got := str(formatted[c.rec], c.path...); got != c.want {
			t.Errorf("record %d %v = %#v, want %#v", c.rec, c.path, got, c.want)
		}
	}
	members, _ := str(formatted[3], "value", "data", "members").([]any)
	if len(members) != 2 {
		t.Fatalf("members %#v", members)
	}
	m0 := members[0].(map[string]any)
	if m0["memberId"] != "c-1" || m0["groupInstanceId"] != "i-1" || m0["clientHost"] != "/127.0.0.1" || m0["sessionTimeout"] != 45000.0 || m0["rebalanceTimeout"] != 60000.0 {
		t.Fatalf("member %#v", m0)
	}

	// We read Kafka's (newest versions, a tagged topic id, a tombstone).
	if len(kafkaRecords) != 4 {
		t.Fatalf("%d records from Kafka", len(kafkaRecords))
	}
	k, err := DecodeKey(kafkaRecords[0].Key)
	ov, err2 := DecodeOffsetValue(kafkaRecords[0].Value)
	if err != nil || err2 != nil || k.Group != "kgroup" || k.Topic != "ktopic" || k.Partition != 3 ||
		ov.Offset != 1234 || ov.LeaderEpoch != 7 || ov.Metadata != "kmeta" || ov.CommitTimestamp != 1111 {
		t.Fatalf("Kafka offset record: %+v %+v %v %v", k, ov, err, err2)
	}
	if k, err := DecodeKey(kafkaRecords[1].Key); err != nil || k.Topic != "gone" || kafkaRecords[1].Value != nil {
		t.Fatalf("Kafka tombstone: %+v %v", k, err)
	}
	gv, err := DecodeGroupValue(kafkaRecords[2].Value)
	if err != nil || gv.Generation != 9 || *gv.Leader != "m-1" || gv.CurrentStateTimestamp != 2222 || len(gv.Members) != 2 ||
		*gv.Members[0].InstanceID != "inst" || gv.Members[0].SessionTimeoutMs != 45000 || !bytes.Equal(gv.Members[0].Assignment, []byte{4, 5}) ||
		gv.Members[1].InstanceID != nil || gv.Members[1].ClientHost != "/10.0.0.2" {
		t.Fatalf("Kafka group record v4: %+v %v", gv, err)
	}
	gv, err = DecodeGroupValue(kafkaRecords[3].Value)
	if err != nil || gv.Generation != 10 || gv.Protocol != nil || gv.Leader != nil || len(gv.Members) != 0 {
		t.Fatalf("Kafka empty group record: %+v %v", gv, err)
	}

	// And the records replay into a coordinator.
	c := NewCoordinator(testConfig())
	c.BeginLoad()
	for _, r := range kafkaRecords {
		if err := c.Replay(r.Key, r.Value); err != nil {
			t.Fatal(err)
		}
	}
	c.EndLoad(t0)
	g := c.Group("kgroup")
	if g == nil || g.State() != Empty || g.Generation() != 10 {
		t.Fatalf("replayed Kafka records: %+v", g)
	}
	if f := g.FetchOffsets(nil, false); len(f) != 1 || f[0].Offset != 1234 || f[0].LeaderEpoch != 7 {
		t.Fatalf("offsets %+v", f)
	}
}
