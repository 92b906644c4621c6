package schemaregistry

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// TestPythonSerdes produces Customer records with confluent-kafka-python's
// Avro, JSON Schema and Protobuf serializers (schema.registry.url at
// samsa, the schema registered automatically), consumes them back with
// the matching deserializers, and checks the records on the wire:
// Confluent's magic byte and the id the registry gave the subject.
func TestPythonSerdes(t *testing.T) {
	b := startBroker(t)
	for _, format := range []string{"avro", "json", "protobuf"} {
		t.Run(format, func(t *testing.T) { pythonRoundTrip(t, b, format) })
	}
}

func pythonRoundTrip(t *testing.T, b broker, format string) {
	topic, count := "customers-"+format, 20
	adm := kadm.NewClient(testkit.NewClient(t, kgo.SeedBrokers(b.Addr)))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}

	out := testkit.RunInteropPython(ctx, t, "schema_registry_serdes.py", format, b.Addr, b.URL(), topic, fmt.Sprint(count))
	var got struct {
		Records []struct {
			CustomerName string `json:"customerName"`
			CustomerID   int    `json:"customerId"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &got); err != nil {
		t.Fatalf("python printed %s: %v", out, err)
	}
	if len(got.Records) != count {
		t.Fatalf("python consumed %d records, want %d", len(got.Records), count)
	}
	for i, r := range got.Records {
		if r.CustomerName != fmt.Sprintf("customer-%d", i) || r.CustomerID != i {
			t.Errorf("record %d decoded as %+v", i, r)
		}
	}

	// On the wire: magic byte 0, then the id of topic-value's schema.
	latest, err := srClient(t, b.URL()).SchemaByVersion(ctx, topic+"-value", -1)
	if err != nil {
		t.Fatalf("the serializer registered no %s-value: %v", topic, err)
	}
	cl := testkit.NewClient(t, kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := 0
	for seen < count && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			seen++
			if len(r.Value) < 5 || r.Value[0] != 0 || int(binary.BigEndian.Uint32(r.Value[1:5])) != latest.ID {
				t.Errorf("record at offset %d starts % x, want 00 and id %d", r.Offset, r.Value[:min(5, len(r.Value))], latest.ID)
			}
		})
	}
	if seen != count {
		t.Errorf("read %d raw records, want %d", seen, count)
	}
}
