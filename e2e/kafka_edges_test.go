package e2e

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Edge cases of the admin APIs, sent as raw requests (kadm smooths some of
// them away), each checked against what Apache Kafka answers.

// noError stands for error code 0 in wantCode.
var noError = &kerr.Error{Message: "NONE", Code: 0}

func wantCode(t *testing.T, what string, code int16, message *string, want *kerr.Error) {
	t.Helper()
	if code != want.Code {
		t.Errorf("%s: error %v (message %q), want %s (%d)", what, kerr.ErrorForCode(code), deref(message), want.Message, want.Code)
		return
	}
	if want.Code != 0 && (message == nil || *message == "") {
		t.Errorf("%s: %s without an error message; Kafka explains it", what, want.Message)
	}
}

func createTopicsRaw(t *testing.T, cl *kgo.Client, topics ...kmsg.CreateTopicsRequestTopic) map[string][]kmsg.CreateTopicsResponseTopic {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	req.Topics = topics
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatalf("CreateTopics: %v", err)
	}
	out := map[string][]kmsg.CreateTopicsResponseTopic{}
	for _, rt := range resp.Topics {
		out[rt.Topic] = append(out[rt.Topic], rt)
	}
	return out
}

func newTopic(name string, partitions int32, rf int16) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, rf
	return rt
}

func brokerID(t *testing.T, cl *kgo.Client) int32 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil || len(resp.Brokers) != 1 {
		t.Fatalf("metadata: %v, %+v", err, resp)
	}
	return resp.Brokers[0].NodeID
}

func TestCreateTopicsEdges(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	id := brokerID(t, cl)

	t.Run("DuplicateInOneRequest", func(t *testing.T) {
		name := topicName(t, "dup")
		got := createTopicsRaw(t, cl, newTopic(name, 1, 1), newTopic(name, 1, 1))
		if len(got[name]) == 0 {
			t.Fatalf("no answer for %s", name)
		}
		for _, rt := range got[name] {
			wantCode(t, "a topic named twice in one request", rt.ErrorCode, rt.ErrorMessage, kerr.InvalidRequest)
		}
	})

	t.Run("ManualAssignment", func(t *testing.T) {
		name := topicName(t, "manual")
		rt := newTopic(name, -1, -1)
		for p := int32(0); p < 2; p++ {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = p, []int32{id}
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
		got := createTopicsRaw(t, cl, rt)[name]
		if len(got) != 1 {
			t.Fatalf("answers: %+v", got)
		}
		wantCode(t, "create with a manual assignment", got[0].ErrorCode, got[0].ErrorMessage, noError)
		if got[0].ErrorCode == 0 && got[0].NumPartitions != 2 {
			t.Errorf("manual assignment of 2 partitions made %d", got[0].NumPartitions)
		}
	})

	t.Run("AssignmentToUnknownBroker", func(t *testing.T) {
		name := topicName(t, "nobroker")
		rt := newTopic(name, -1, -1)
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = 0, []int32{id + 41}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		got := createTopicsRaw(t, cl, rt)[name]
		if len(got) != 1 {
			t.Fatalf("answers for %s: %+v", name, got)
		}
		{
			wantCode(t, "assignment to an unknown broker", got[0].ErrorCode, got[0].ErrorMessage, kerr.InvalidReplicaAssignment)
		}
	})

	t.Run("AssignmentAndCount", func(t *testing.T) {
		name := topicName(t, "both")
		rt := newTopic(name, 1, 1)
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = 0, []int32{id}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		got := createTopicsRaw(t, cl, rt)[name]
		if len(got) != 1 {
			t.Fatalf("answers for %s: %+v", name, got)
		}
		{
			wantCode(t, "both an assignment and a partition count", got[0].ErrorCode, got[0].ErrorMessage, kerr.InvalidRequest)
		}
	})

	t.Run("NullConfigValue", func(t *testing.T) {
		name := topicName(t, "nullcfg")
		rt := newTopic(name, 1, 1)
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name = "retention.ms" // Value left nil
		rt.Configs = append(rt.Configs, c)
		got := createTopicsRaw(t, cl, rt)[name]
		if len(got) != 1 {
			t.Fatalf("answers for %s: %+v", name, got)
		}
		{
			wantCode(t, "a config with a null value", got[0].ErrorCode, got[0].ErrorMessage, kerr.InvalidConfig)
		}
	})

	t.Run("ConcurrentSameName", func(t *testing.T) {
		name := topicName(t, "race")
		const racers = 8
		codes := make([]int16, racers)
		var wg sync.WaitGroup
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				c, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
				if err != nil {
					codes[i] = -2
					return
				}
				defer c.Close()
				req := kmsg.NewPtrCreateTopicsRequest()
				req.TimeoutMillis = 10000
				req.Topics = []kmsg.CreateTopicsRequestTopic{newTopic(name, 1, 1)}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				resp, err := req.RequestWith(ctx, c)
				if err != nil || len(resp.Topics) != 1 {
					codes[i] = -1
					return
				}
				codes[i] = resp.Topics[0].ErrorCode
			}(i)
		}
		wg.Wait()
		var ok, exists int
		for _, c := range codes {
			switch c {
			case 0:
				ok++
			case kerr.TopicAlreadyExists.Code:
				exists++
			}
		}
		if ok != 1 || exists != racers-1 {
			t.Errorf("%d racing creates of one name: codes %v; want one success and %d TOPIC_ALREADY_EXISTS", racers, codes, racers-1)
		}
	})

	t.Run("RecreateAfterDelete", func(t *testing.T) {
		name := topicName(t, "again")
		first := createTopicsRaw(t, cl, newTopic(name, 1, 1))[name]
		if len(first) != 1 || first[0].ErrorCode != 0 {
			t.Fatalf("create: %+v", first)
		}
		del := kmsg.NewPtrDeleteTopicsRequest()
		del.TimeoutMillis = 10000
		dt := kmsg.NewDeleteTopicsRequestTopic()
		dt.Topic = kmsg.StringPtr(name)
		del.Topics = append(del.Topics, dt)
		del.TopicNames = []string{name}
		if resp, err := del.RequestWith(testContext(t), cl); err != nil || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("delete: %v %+v", err, resp)
		}
		// Kafka may refuse the name briefly while the deletion completes.
		deadline := time.Now().Add(5 * time.Second)
		for {
			again := createTopicsRaw(t, cl, newTopic(name, 2, 1))[name]
			if len(again) == 1 && again[0].ErrorCode == 0 {
				if again[0].TopicID == first[0].TopicID {
					t.Errorf("the recreated topic kept the deleted one's id %x", first[0].TopicID)
				}
				if again[0].NumPartitions != 2 {
					t.Errorf("recreated with %d partitions, want 2", again[0].NumPartitions)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("recreating a deleted topic still fails after 5s: %+v", again)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func TestDeleteTopicsByID(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	name := topicName(t, "byid")
	created := createTopicsRaw(t, cl, newTopic(name, 1, 1))[name]
	if len(created) != 1 || created[0].ErrorCode != 0 || created[0].TopicID == [16]byte{} {
		t.Fatalf("create: %+v", created)
	}

	del := func(id [16]byte) kmsg.DeleteTopicsResponseTopic {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version = 6
		req.TimeoutMillis = 10000
		dt := kmsg.NewDeleteTopicsRequestTopic()
		dt.TopicID = id
		req.Topics = append(req.Topics, dt)
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil || len(resp.Topics) != 1 {
			t.Fatalf("DeleteTopics v6: %v %+v", err, resp)
		}
		return resp.Topics[0]
	}
	r := del(created[0].TopicID)
	wantCode(t, "delete by topic id", r.ErrorCode, r.ErrorMessage, noError)
	if r.Topic == nil || *r.Topic != name {
		t.Errorf("the answer names topic %q, want %q", deref(r.Topic), name)
	}
	if d := freshTopics(t, b.Addr(), name); d[name].Err == nil {
		t.Errorf("%s still exists after deletion by id", name)
	}
	r = del(created[0].TopicID)
	if r.ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("delete of an unknown id: %v, want UNKNOWN_TOPIC_ID (100)", kerr.ErrorForCode(r.ErrorCode))
	}
}

func TestMetadataEdges(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	name := topicName(t, "m")
	if got := createTopicsRaw(t, cl, newTopic(name, 2, 1))[name]; len(got) != 1 || got[0].ErrorCode != 0 {
		t.Fatalf("create: %+v", got)
	}
	metadata := func(topics []string, nullTopics, autoCreate bool) *kmsg.MetadataResponse {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = autoCreate
		if !nullTopics {
			req.Topics = []kmsg.MetadataRequestTopic{}
			for _, tp := range topics {
				rt := kmsg.NewMetadataRequestTopic()
				rt.Topic = kmsg.StringPtr(tp)
				req.Topics = append(req.Topics, rt)
			}
		}
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatalf("metadata: %v", err)
		}
		return resp
	}
	if resp := metadata(nil, false, false); len(resp.Topics) != 0 {
		t.Errorf("an empty topic list must return no topics, got %d", len(resp.Topics))
	}
	all := metadata(nil, true, false)
	var seen bool
	for _, tp := range all.Topics {
		seen = seen || deref(tp.Topic) == name
	}
	if !seen {
		t.Errorf("a null topic list must return every topic; %s missing among %d", name, len(all.Topics))
	}

	for _, bad := range []string{"bad name!", strings.Repeat("z", 250)} {
		resp := metadata([]string{bad}, false, false)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidTopicException.Code {
			t.Errorf("metadata for the illegal name %.20q: %+v, want INVALID_TOPIC_EXCEPTION", bad, resp.Topics)
		}
		resp = metadata([]string{bad}, false, true)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidTopicException.Code {
			t.Errorf("auto-create of the illegal name %.20q: %+v, want INVALID_TOPIC_EXCEPTION", bad, resp.Topics)
		}
	}

	// auto.create.topics.enable is true by default, as in Kafka.
	auto := topicName(t, "auto")
	first := metadata([]string{auto}, false, true)
	if len(first.Topics) != 1 {
		t.Fatalf("auto-create: %+v", first.Topics)
	}
	// Kafka answers the creating request with LEADER_NOT_AVAILABLE (ZK
	// mode) or UNKNOWN_TOPIC_OR_PARTITION (KRaft 4.x) until the topic
	// exists; a broker that creates it at once may answer with it.
	if c := first.Topics[0].ErrorCode; c != 0 && c != kerr.LeaderNotAvailable.Code && c != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("auto-create first answer: %v, want none, LEADER_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(c))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp := metadata([]string{auto}, false, false)
		if len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 {
			if n := len(resp.Topics[0].Partitions); n != 1 {
				t.Errorf("auto-created with %d partitions, want num.partitions = 1", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("auto-created topic not there after 5s: %+v", resp.Topics)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestConfigEdges(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	name := topicName(t, "cfg")
	rt := newTopic(name, 1, 1)
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = "cleanup.policy", kmsg.StringPtr("delete")
	rt.Configs = append(rt.Configs, c)
	if got := createTopicsRaw(t, cl, rt)[name]; len(got) != 1 || got[0].ErrorCode != 0 {
		t.Fatalf("create: %+v", got)
	}

	describe := func(keys ...string) []kmsg.DescribeConfigsResponseResourceConfig {
		t.Helper()
		req := kmsg.NewPtrDescribeConfigsRequest()
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, name
		r.ConfigNames = keys
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil || len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
			t.Fatalf("describe: %v %+v", err, resp)
		}
		return resp.Resources[0].Configs
	}
	value := func(key string) string {
		got := describe(key)
		if len(got) != 1 {
			t.Fatalf("describe %s: %d entries", key, len(got))
		}
		return deref(got[0].Value)
	}
	alter := func(validate bool, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.ValidateOnly = validate
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeTopic, name, ops
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil || len(resp.Resources) != 1 {
			t.Fatalf("incremental alter: %v %+v", err, resp)
		}
		return resp.Resources[0]
	}
	op := func(o kmsg.IncrementalAlterConfigOp, key, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = key, o, kmsg.StringPtr(value)
		return c
	}

	t.Run("DescribeOnlyNamedKeys", func(t *testing.T) {
		got := describe("cleanup.policy", "retention.ms", "no.such.key")
		names := map[string]bool{}
		for _, c := range got {
			names[c.Name] = true
		}
		if len(got) != 2 || !names["cleanup.policy"] || !names["retention.ms"] {
			t.Errorf("describing 2 known keys and 1 unknown returned %v", names)
		}
	})

	t.Run("AppendSubtract", func(t *testing.T) {
		r := alter(false, op(kmsg.IncrementalAlterConfigOpAppend, "cleanup.policy", "compact"))
		wantCode(t, "APPEND compact to cleanup.policy", r.ErrorCode, r.ErrorMessage, noError)
		if v := value("cleanup.policy"); v != "delete,compact" {
			t.Errorf("after APPEND compact: cleanup.policy = %q, want delete,compact", v)
		}
		r = alter(false, op(kmsg.IncrementalAlterConfigOpSubtract, "cleanup.policy", "delete"))
		wantCode(t, "SUBTRACT delete from cleanup.policy", r.ErrorCode, r.ErrorMessage, noError)
		if v := value("cleanup.policy"); v != "compact" {
			t.Errorf("after SUBTRACT delete: cleanup.policy = %q, want compact", v)
		}
		r = alter(false, op(kmsg.IncrementalAlterConfigOpAppend, "retention.ms", "5"))
		wantCode(t, "APPEND to the non-list retention.ms", r.ErrorCode, r.ErrorMessage, kerr.InvalidConfig)
	})

	t.Run("DuplicateKey", func(t *testing.T) {
		r := alter(false, op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", "1000"),
			op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", "2000"))
		wantCode(t, "one key set twice in a request", r.ErrorCode, r.ErrorMessage, kerr.InvalidRequest)
	})

	t.Run("ValidateOnly", func(t *testing.T) {
		before := value("retention.ms")
		r := alter(true, op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", "4242"))
		wantCode(t, "validate-only alter", r.ErrorCode, r.ErrorMessage, noError)
		if v := value("retention.ms"); v != before {
			t.Errorf("validate-only alter changed retention.ms from %s to %s", before, v)
		}
		r = alter(true, op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", "never"))
		wantCode(t, "validate-only alter with a bad value", r.ErrorCode, r.ErrorMessage, kerr.InvalidConfig)
	})
}

func TestCreatePartitionsEdges(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	id := brokerID(t, cl)
	name := topicName(t, "cp")
	if got := createTopicsRaw(t, cl, newTopic(name, 1, 1))[name]; len(got) != 1 || got[0].ErrorCode != 0 {
		t.Fatalf("create: %+v", got)
	}
	send := func(topics ...kmsg.CreatePartitionsRequestTopic) []kmsg.CreatePartitionsResponseTopic {
		t.Helper()
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.TimeoutMillis = 10000
		req.Topics = topics
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatalf("CreatePartitions: %v", err)
		}
		return resp.Topics
	}
	grow := func(count int32, assignment ...[]int32) kmsg.CreatePartitionsRequestTopic {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = name, count
		for _, replicas := range assignment {
			a := kmsg.NewCreatePartitionsRequestTopicAssignment()
			a.Replicas = replicas
			rt.Assignment = append(rt.Assignment, a)
		}
		return rt
	}

	got := send(grow(2), grow(3))
	if len(got) == 0 {
		t.Fatal("no answer")
	}
	for _, r := range got {
		wantCode(t, "a topic named twice in one CreatePartitions", r.ErrorCode, r.ErrorMessage, kerr.InvalidRequest)
	}

	got = send(grow(3, []int32{id}))
	if len(got) != 1 {
		t.Fatalf("answers: %+v", got)
	}
	wantCode(t, "2 new partitions with 1 assignment", got[0].ErrorCode, got[0].ErrorMessage, kerr.InvalidReplicaAssignment)

	got = send(grow(3, []int32{id}, []int32{id + 41}))
	if len(got) != 1 {
		t.Fatalf("answers: %+v", got)
	}
	wantCode(t, "an assignment to an unknown broker", got[0].ErrorCode, got[0].ErrorMessage, kerr.InvalidReplicaAssignment)

	got = send(grow(3, []int32{id}, []int32{id}))
	if len(got) != 1 {
		t.Fatalf("answers: %+v", got)
	}
	wantCode(t, "a valid assignment of 2 new partitions", got[0].ErrorCode, got[0].ErrorMessage, noError)
	if n := len(freshTopics(t, b.Addr(), name)[name].Partitions); n != 3 {
		t.Errorf("after growing to 3 with an assignment: %d partitions", n)
	}
}

// Kafka marks its own topics (__consumer_offsets, __transaction_state) as
// internal in Metadata, whoever created them, and admin tools hide them
// from plain listings.
func TestInternalTopicsAreMarked(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	cl := newClient(t, b.Addr())
	for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
		got := createTopicsRaw(t, cl, newTopic(name, 1, 1))[name]
		if len(got) != 1 || got[0].ErrorCode != 0 {
			t.Fatalf("create %s: %+v", name, got)
		}
	}
	req := kmsg.NewPtrMetadataRequest()
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range resp.Topics {
		if !tp.IsInternal {
			t.Errorf("Metadata says %s is not internal; Kafka marks it internal", deref(tp.Topic))
		}
	}
	if listed := freshTopics(t, b.Addr()); len(listed) != 0 {
		t.Errorf("kadm ListTopics (internal topics hidden) lists %v", listed.Names())
	}
}

// Metadata treats its topic list as a set, as Kafka does: a topic named
// twice is described once.
func TestMetadataDuplicateTopicOnce(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	name := topicName(t, "twice")
	if got := createTopicsRaw(t, cl, newTopic(name, 1, 1))[name]; len(got) != 1 || got[0].ErrorCode != 0 {
		t.Fatalf("create: %+v", got)
	}
	req := kmsg.NewPtrMetadataRequest()
	for i := 0; i < 2; i++ {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 {
		t.Errorf("Metadata naming %s twice answered %d topic entries; Kafka answers one", name, len(resp.Topics))
	}
}

// Clients see Kafka error codes and messages written for them, never Go
// error strings with a package prefix (house rule, design.md).
func TestErrorMessagesHaveNoGoPrefix(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	name := topicName(t, "msg")
	if got := createTopicsRaw(t, cl, newTopic(name, 1, 1))[name]; len(got) != 1 || got[0].ErrorCode != 0 {
		t.Fatalf("create: %+v", got)
	}
	goPrefix := regexp.MustCompile(`^(config|actors|metadata|wire|segment|netloop|samsa)[a-z/]*: `)
	check := func(what string, msg *string) {
		t.Helper()
		if msg != nil && goPrefix.MatchString(*msg) {
			t.Errorf("%s: the client sees the Go error %q", what, *msg)
		}
	}
	for _, kv := range [][2]string{{"segment.bytes", "1"}, {"retention.ms", "-2"}, {"compression.type", "brotli"}, {"min.insync.replicas", "0"}} {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, name
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[0], kmsg.StringPtr(kv[1])
		r.Configs = append(r.Configs, c)
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil || len(resp.Resources) != 1 {
			t.Fatalf("alter: %v", err)
		}
		wantCode(t, "set "+kv[0]+"="+kv[1], resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, kerr.InvalidConfig)
		check("set "+kv[0]+"="+kv[1], resp.Resources[0].ErrorMessage)

		rt := newTopic(topicName(t, "bad"), 1, 1)
		cc := kmsg.NewCreateTopicsRequestTopicConfig()
		cc.Name, cc.Value = kv[0], kmsg.StringPtr(kv[1])
		rt.Configs = append(rt.Configs, cc)
		for _, got := range createTopicsRaw(t, cl, rt)[rt.Topic] {
			check("create with "+kv[0]+"="+kv[1], got.ErrorMessage)
		}
	}
}

// DescribeConfigs of an illegal topic name: Kafka validates the name first
// and answers INVALID_TOPIC_EXCEPTION.
func TestDescribeConfigsIllegalTopicName(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "bad name!"
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil || len(resp.Resources) != 1 {
		t.Fatalf("describe: %v %+v", err, resp)
	}
	wantCode(t, "describe configs of \"bad name!\"", resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, kerr.InvalidTopicException)
}
