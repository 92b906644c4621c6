package console

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMessagesDecodedThroughTheSchemaRegistry: a Customer record written
// in Confluent's wire format (magic 0, the schema id the broker's own
// registry gave, Avro binary) shows in the message browser as the JSON
// the registry decodes it to, with its schema id; a record that is not in
// the wire format says so and is shown as text.
func TestMessagesDecodedThroughTheSchemaRegistry(t *testing.T) {
	b := startBroker(t)
	const topic = "customers"
	schema := `{"type":"record","name":"Customer","fields":[{"name":"customerName","type":"string"},{"name":"customerId","type":"int"}]}`
	reqBody, _ := json.Marshal(map[string]string{"schema": schema})
	resp, err := http.Post(b.base+"/subjects/"+topic+"-value/versions", "application/vnd.schemaregistry.v1+json", strings.NewReader(string(reqBody)))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var reg struct{ ID int }
	if err := json.Unmarshal(raw, &reg); err != nil || resp.StatusCode != http.StatusOK || reg.ID == 0 {
		t.Fatalf("registering the schema: %d %s", resp.StatusCode, raw)
	}

	// Avro binary of {"customerName": "Ann", "customerId": 42}: a string
	// is its zig-zag length then its bytes, an int its zig-zag value.
	value := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(value[1:], uint32(reg.ID))
	value = append(value, 3<<1, 'A', 'n', 'n', 42<<1)
	cl := b.client(t, kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: value, Partition: 0}, &kgo.Record{Value: []byte("plain text"), Partition: 0}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	status, body := fetch(t, httpClient(t), b, "/topics/"+topic+"/messages?partition=0&from=offset&offset=0&format=schema")
	if status != http.StatusOK {
		t.Fatalf("messages page: %d %s", status, body)
	}
	for _, want := range []string{"<option selected>schema</option>", "&#34;customerName&#34;: &#34;Ann&#34;", "&#34;customerId&#34;: 42",
		fmt.Sprintf("schema id %d", reg.ID), "plain text", "not in the Schema Registry&#39;s wire format"} {
		if !strings.Contains(body, want) {
			t.Errorf("the messages page decoded through the registry lacks %q", want)
		}
	}
}
