package schemaregistry

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
)

// TestSerializeAvro encodes JSON in Avro's binary encoding and checks
// it with hamba's decoder (an independent reader), then back to JSON.
func TestSerializeAvro(t *testing.T) {
	reg, _ := newMemRegistry(t)
	ctx := context.Background()
	schema := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null},
		{"name":"tags","type":{"type":"array","items":"string"}},{"name":"price","type":"double"},{"name":"state","type":{"type":"enum","name":"State","symbols":["NEW","PAID"]}},
		{"name":"attrs","type":{"type":"map","values":"int"}},{"name":"paid","type":"boolean","default":false}]}`
	payload, used, err := reg.Serialize(ctx, SchemaChoice{Subject: "orders-value", Schema: schema},
		json.RawMessage(`{"id":9007199254740993,"note":{"string":"rush"},"tags":["a","b"],"price":1.5,"state":"PAID","attrs":{"x":1,"y":-2}}`))
	if err != nil {
		t.Fatal(err)
	}
	id := used.ID
	if payload[0] != 0 || int(binary.BigEndian.Uint32(payload[1:5])) != id {
		t.Fatalf("header % x, want 00 and id %d", payload[:5], id)
	}
	var got struct {
		ID    int64          `avro:"id"`
		Note  *string        `avro:"note"`
		Tags  []string       `avro:"tags"`
		Price float64        `avro:"price"`
		State string         `avro:"state"`
		Attrs map[string]int `avro:"attrs"`
		Paid  bool           `avro:"paid"`
	}
	if err := avro.Unmarshal(avro.MustParse(schema), payload[5:], &got); err != nil {
		t.Fatalf("hamba cannot read the datum: %v", err)
	}
	if got.ID != 9007199254740993 || got.Note == nil || *got.Note != "rush" || len(got.Tags) != 2 || got.Price != 1.5 ||
		got.State != "PAID" || got.Attrs["y"] != -2 || got.Paid {
		t.Errorf("decoded %+v", got)
	}
	back, backID, err := reg.Deserialize(ctx, payload)
	if err != nil || backID != id {
		t.Fatalf("Deserialize: %v (id %d)", err, backID)
	}
	for _, want := range []string{`"id":9007199254740993`, `"note":{"string":"rush"}`, `"state":"PAID"`, `"paid":false`} {
		if !strings.Contains(string(back), want) {
			t.Errorf("deserialized %s lacks %s", back, want)
		}
	}
	for _, bad := range []string{`{"id":"x","tags":[],"price":1,"state":"NEW","attrs":{}}`, `{"id":1,"tags":[],"price":1,"state":"LOST","attrs":{}}`, `{"tags":[]}`} {
		if _, _, err := reg.Serialize(ctx, SchemaChoice{ID: id}, json.RawMessage(bad)); !isCode(err, codeUnprocessable) {
			t.Errorf("Serialize %s: %v, want 422", bad, err)
		}
	}
}

func TestSerializeJSONSchemaAndProtobuf(t *testing.T) {
	reg, _ := newMemRegistry(t)
	ctx := context.Background()
	js := `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	payload, _, err := reg.Serialize(ctx, SchemaChoice{SchemaType: typeJSON, Subject: "j", Schema: js}, json.RawMessage(`{"name": "x"}`))
	if err != nil || string(payload[5:]) != `{"name":"x"}` {
		t.Fatalf("JSON Schema serialize = %q, %v", payload, err)
	}
	if _, _, err := reg.Serialize(ctx, SchemaChoice{SchemaType: typeJSON, Subject: "j"}, json.RawMessage(`{"name": 1}`)); !isCode(err, codeUnprocessable) {
		t.Errorf("invalid JSON instance: %v, want 422", err)
	}
	proto := "syntax = \"proto3\";\nmessage Customer { string name = 1; int32 id = 2; }\n"
	payload, _, err = reg.Serialize(ctx, SchemaChoice{SchemaType: typeProtobuf, Subject: "p", Schema: proto}, json.RawMessage(`{"name":"ann","id":7}`))
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := reg.Deserialize(ctx, payload)
	if err != nil || !strings.Contains(string(back), `"ann"`) || !strings.Contains(string(back), "7") {
		t.Errorf("Protobuf round trip = %s, %v", back, err)
	}
}
