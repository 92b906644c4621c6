package jsonavro

import (
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
)

const orderSchema = `{"type":"record","name":"Order","fields":[
 {"name":"id","type":"long"},
 {"name":"qty","type":"int"},
 {"name":"price","type":"double"},
 {"name":"item","type":"string"},
 {"name":"gift","type":"boolean","default":false},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}}]}`

// TestConvertRoundTrips: a JSON order encodes to Avro that decodes back
// to the same values; defaults fill missing fields.
func TestConvertRoundTrips(t *testing.T) {
	c, err := New("in", "out", "dead", orderSchema)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Convert([]byte(`{"id":9007199254740993,"qty":3,"price":2.5,"item":"tea","note":"hi","tags":["a","b"],"status":"PAID"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := avro.Unmarshal(c.schema, b, &got); err != nil {
		t.Fatal(err)
	}
	if got["id"] != int64(9007199254740993) || got["qty"] != 3 || got["price"] != 2.5 || got["item"] != "tea" ||
		got["gift"] != false || got["status"] != "PAID" || len(got["tags"].([]any)) != 2 {
		t.Errorf("decoded %v", got)
	}
	if got["note"] != "hi" {
		t.Errorf("note decoded as %#v", got["note"])
	}
}

func TestConvertRejectsWhatDoesNotFit(t *testing.T) {
	c, err := New("in", "out", "dead", orderSchema)
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		`not json`: "not JSON",
		`{"id":1}`: `missing field "qty"`,
		`{"id":1.5,"qty":1,"price":1,"item":"x","tags":[],"status":"NEW"}`:          "id: want an integer",
		`{"id":1,"qty":4294967296,"price":1,"item":"x","tags":[],"status":"NEW"}`:   "qty: want an int",
		`{"id":1,"qty":1,"price":1,"item":"x","tags":[],"status":"LOST"}`:           "status: want one of",
		`{"id":1,"qty":1,"price":1,"item":"x","tags":[1],"status":"NEW"}`:           "tags[0]: want a string",
		`{"id":1,"qty":1,"price":1,"item":"x","tags":[],"status":"NEW"} {"more":1}`: "not one JSON document",
	} {
		_, err := c.Convert([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Convert(%s) = %v, want an error with %q", doc, err, want)
		}
	}
}
