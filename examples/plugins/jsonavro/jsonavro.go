// Package jsonavro is an example plug-in: it converts JSON records of one
// topic to Avro binary in another, against an Avro schema (hamba/avro).
// A record that is not JSON or does not fit the schema goes to a
// dead-letter topic with the reason in an "error" header: a bad record
// is data to look at, not a reason to stop (returning an error would
// redeliver it for ever).
package jsonavro

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/plugin"
)

// Converter converts the JSON records of From to Avro in To.
type Converter struct {
	From, To, DeadLetter string
	schema               avro.Schema
	fingerprint          string
}

// New converts from's JSON records to Avro binary in to, against the
// Avro schema schemaJSON; bad records go to deadLetter.
func New(from, to, deadLetter, schemaJSON string) (*Converter, error) {
	s, err := avro.Parse(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("avro schema: %w", err)
	}
	fp := s.Fingerprint()
	return &Converter{From: from, To: to, DeadLetter: deadLetter, schema: s, fingerprint: hex.EncodeToString(fp[:])}, nil
}

// Name is "jsonavro-FROM".
func (c *Converter) Name() string { return "jsonavro-" + c.From }

// Topics is the source topic.
func (c *Converter) Topics() []string { return []string{c.From} }

// Handle converts one record.
func (c *Converter) Handle(ctx *plugin.Context, rec *kgo.Record) error {
	out, err := c.Convert(rec.Value)
	if err != nil {
		headers := append(append([]kgo.RecordHeader(nil), rec.Headers...), kgo.RecordHeader{Key: "error", Value: []byte(err.Error())})
		ctx.Produce(&kgo.Record{Topic: c.DeadLetter, Key: rec.Key, Value: rec.Value, Headers: headers, Timestamp: rec.Timestamp})
		return nil
	}
	headers := append(append([]kgo.RecordHeader(nil), rec.Headers...),
		kgo.RecordHeader{Key: "content-type", Value: []byte("avro/binary")},
		kgo.RecordHeader{Key: "avro-schema-sha256", Value: []byte(c.fingerprint)})
	ctx.Produce(&kgo.Record{Topic: c.To, Key: rec.Key, Value: out, Headers: headers, Timestamp: rec.Timestamp})
	return nil
}

// Convert encodes one JSON document as Avro binary.
func (c *Converter) Convert(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // Avro int and long need exact integers, not float64
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not one JSON document: data after it")
	}
	native, err := fromJSON(c.schema, v, "")
	if err != nil {
		return nil, err
	}
	return avro.Marshal(c.schema, native)
}
