package restproxy

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
)

type produceAnswer struct {
	ErrorCode   int    `json:"error_code"`
	TopicName   string `json:"topic_name"`
	PartitionID int32  `json:"partition_id"`
	Offset      int64  `json:"offset"`
	Value       *struct {
		Type string `json:"type"`
		Size int    `json:"size"`
	} `json:"value"`
}

// readAt reads the record at partition/offset of topic.
func readAt(t *testing.T, p proxy, topic string, partition int32, offset int64) *kgo.Record {
	t.Helper()
	cl := p.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(offset)}}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("no record at %s/%d@%d", topic, partition, offset)
		}
		if recs := fs.Records(); len(recs) > 0 {
			return recs[0]
		}
	}
}

// TestV3ProduceFormats produces JSON, BINARY and STRING records to
// chosen partitions, with a header, and reads the bytes back with
// franz-go; then AVRO through the registry, checked with hamba.
func TestV3ProduceFormats(t *testing.T) {
	p := startProxy(t)
	topics := createTopic(t, p, "events", 2)
	records := topics + "/events/records"
	binary64 := base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 255})
	cases := []struct {
		body       string
		key, value string
	}{
		{`{"partition_id":1,"key":{"type":"STRING","data":"k1"},"value":{"type":"JSON","data":{"a": [1, 2], "b": "x"}}}`, "k1", `{"a":[1,2],"b":"x"}`},
		{fmt.Sprintf(`{"partition_id":0,"key":{"type":"BINARY","data":%q},"value":{"type":"BINARY","data":%q}}`, binary64, binary64), "\x00\x01\x02\xff", "\x00\x01\x02\xff"},
		{`{"partition_id":1,"value":{"type":"STRING","data":"plain text"},"headers":[{"name":"trace","value":"dGhlLWlk"}]}`, "", "plain text"},
	}
	for _, c := range cases {
		var ans produceAnswer
		if code := doJSON(t, "POST", records, "application/json", c.body, &ans); code != 200 || ans.ErrorCode != 200 || ans.TopicName != "events" {
			t.Fatalf("produce %s = %d %+v", c.body, code, ans)
		}
		rec := readAt(t, p, "events", ans.PartitionID, ans.Offset)
		if string(rec.Key) != c.key || string(rec.Value) != c.value || ans.Value.Size != len(c.value) {
			t.Errorf("produced %s; read key %q value %q (size %d)", c.body, rec.Key, rec.Value, ans.Value.Size)
		}
		if strings.Contains(c.body, "headers") && (len(rec.Headers) != 1 || rec.Headers[0].Key != "trace" || string(rec.Headers[0].Value) != "the-id") {
			t.Errorf("headers read back: %+v", rec.Headers)
		}
	}

	// Several records in one body: one answer each.
	code, body := do(t, "POST", records, "application/json", `{"value":{"type":"JSON","data":1}}{"value":{"type":"JSON","data":2}}`)
	if code != 200 || strings.Count(string(body), `"error_code":200`) != 2 {
		t.Errorf("two records in one body = %d %s", code, body)
	}

	// Errors.
	for _, c := range []struct {
		url, body string
		status    int
	}{
		{records, `{"partition_id":7,"value":{"type":"JSON","data":1}}`, 404},
		{topics + "/nope/records", `{"value":{"type":"JSON","data":1}}`, 404},
		{records, `{"value":{"type":"BINARY","data":"not base64!"}}`, 400},
		{records, `{"value":{"type":"XML","data":"<a/>"}}`, 400},
	} {
		var e errorBody
		if code := doJSON(t, "POST", c.url, "application/json", c.body, &e); code != c.status || e.ErrorCode == 0 || e.Message == "" {
			t.Errorf("POST %s %s = %d %+v, want %d with Confluent's error body", c.url, c.body, code, e, c.status)
		}
	}

	// AVRO with an inline schema: registered under events-value, the
	// record in Confluent's wire format.
	schema := `{"type":"record","name":"Customer","fields":[{"name":"customerName","type":"string"},{"name":"customerId","type":"int"}]}`
	var ans produceAnswer
	code = doJSON(t, "POST", records, "application/json",
		fmt.Sprintf(`{"value":{"type":"AVRO","schema":%q,"data":{"customerName":"ann","customerId":42}}}`, schema), &ans)
	if code != 200 || ans.Value == nil || ans.Value.Type != "AVRO" {
		t.Fatalf("AVRO produce = %d %+v", code, ans)
	}
	var latest struct{ ID int }
	if code := doJSON(t, "GET", p.url+"/subjects/events-value/versions/latest", "", "", &latest); code != 200 {
		t.Fatalf("the schema was not registered under events-value: %d", code)
	}
	rec := readAt(t, p, "events", ans.PartitionID, ans.Offset)
	if len(rec.Value) < 5 || rec.Value[0] != 0 || int(binary.BigEndian.Uint32(rec.Value[1:5])) != latest.ID {
		t.Fatalf("AVRO record starts % x, want 00 and id %d", rec.Value[:min(5, len(rec.Value))], latest.ID)
	}
	var customer struct {
		Name string `avro:"customerName"`
		ID   int    `avro:"customerId"`
	}
	if err := avro.Unmarshal(avro.MustParse(schema), rec.Value[5:], &customer); err != nil || customer.Name != "ann" || customer.ID != 42 {
		t.Errorf("AVRO datum decodes to %+v, %v", customer, err)
	}
	// By id, and data that does not fit.
	if code := doJSON(t, "POST", records, "application/json", fmt.Sprintf(`{"value":{"schema_id":%d,"data":{"customerName":"bo","customerId":1}}}`, latest.ID), &ans); code != 200 {
		t.Errorf("AVRO by schema_id = %d", code)
	}
	var e errorBody
	if code := doJSON(t, "POST", records, "application/json", fmt.Sprintf(`{"value":{"type":"AVRO","schema_id":%d,"data":{"customerName":"bo"}}}`, latest.ID), &e); code/100 != 4 || e.ErrorCode == 0 {
		t.Errorf("AVRO data missing a field = %d %+v, want a 4xx error body", code, e)
	}

	// JSONSCHEMA inline, then by schema_id with no type: the answer
	// names the schema's type.
	js := `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`
	if code := doJSON(t, "POST", records, "application/json", fmt.Sprintf(`{"value":{"type":"JSONSCHEMA","subject":"events-json","schema":%q,"data":{"n":1}}}`, js), &ans); code != 200 || ans.Value.Type != "JSONSCHEMA" {
		t.Fatalf("JSONSCHEMA produce = %d %+v", code, ans)
	}
	var jsLatest struct{ ID int }
	doJSON(t, "GET", p.url+"/subjects/events-json/versions/latest", "", "", &jsLatest)
	if code := doJSON(t, "POST", records, "application/json", fmt.Sprintf(`{"value":{"schema_id":%d,"data":{"n":2}}}`, jsLatest.ID), &ans); code != 200 || ans.Value.Type != "JSONSCHEMA" {
		t.Errorf("produce by a JSON schema's id without a type = %d %+v, want type JSONSCHEMA", code, ans)
	}
	if rec := readAt(t, p, "events", ans.PartitionID, ans.Offset); string(rec.Value[5:]) != `{"n":2}` {
		t.Errorf("JSONSCHEMA record %q", rec.Value)
	}
}
