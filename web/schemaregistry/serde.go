package schemaregistry

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Confluent's wire format, as its serializers write it and the REST
// proxy must: a zero magic byte, the schema id (4 bytes, big endian),
// for Protobuf the index path of the message in its file (a count and
// the indexes, zigzag varints; a single 0 for the first message), then
// the datum.

// SchemaChoice says which schema serializes a REST proxy record: by id;
// else the inline Schema (registered under Subject, or found if it is
// there); else Subject's Version (-1 or 0: the latest).
type SchemaChoice struct {
	SchemaType string
	ID         int
	Subject    string
	Version    int
	Schema     string
}

// Serialize encodes data (JSON) with the chosen schema in Confluent's
// wire format and returns it with the schema used (its id and type).
func (r *Registry) Serialize(ctx context.Context, c SchemaChoice, data json.RawMessage) ([]byte, *Version, error) {
	v, err := r.choose(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	b, err := r.serializeWith(v, data)
	return b, v, err
}

func (r *Registry) serializeWith(v *Version, data json.RawMessage) ([]byte, error) {
	r.mu.RLock()
	p, err := r.parse(v.SchemaType, v.Schema, v.References)
	r.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint32([]byte{0}, uint32(v.ID))
	switch s := p.(type) {
	case avroSchema:
		datum, err := decodeNumbers(data)
		if err != nil {
			return nil, err
		}
		b, err := avroEncodeJSON(s.schema, datum)
		if err != nil {
			return nil, errorf(codeUnprocessable, "the data does not fit Avro schema %d: %v", v.ID, err)
		}
		return append(out, b...), nil
	case jsonSchema:
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, errorf(codeUnprocessable, "the data is not JSON: %v", err)
		}
		if err := s.compiled.Validate(inst); err != nil {
			return nil, errorf(codeUnprocessable, "the data does not fit JSON schema %d: %v", v.ID, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			return nil, errorf(codeUnprocessable, "the data is not JSON: %v", err)
		}
		return append(out, compact.Bytes()...), nil
	case protobufSchema:
		if s.file.Messages().Len() == 0 {
			return nil, errorf(codeUnprocessable, "Protobuf schema %d has no message", v.ID)
		}
		msg := dynamicpb.NewMessage(s.file.Messages().Get(0))
		if err := protojson.Unmarshal(data, msg); err != nil {
			return nil, errorf(codeUnprocessable, "the data does not fit Protobuf schema %d: %v", v.ID, err)
		}
		b, err := proto.Marshal(msg)
		if err != nil {
			return nil, errorf(codeUnprocessable, "encoding Protobuf: %v", err)
		}
		return append(append(out, 0), b...), nil // message index path [0]
	}
	return nil, errorf(codeInvalidSchema, "schema %d cannot serialize", v.ID)
}

// choose finds (or registers) the schema a SchemaChoice names.
func (r *Registry) choose(ctx context.Context, c SchemaChoice) (*Version, error) {
	switch {
	case c.ID > 0:
		return r.SchemaByID(ctx, c.ID)
	case c.Schema != "":
		q := &RegisterRequest{Schema: c.Schema, SchemaType: c.SchemaType}
		if v, err := r.Lookup(ctx, c.Subject, q, false, false); err == nil {
			return v, nil
		}
		return r.Register(ctx, c.Subject, q, false)
	}
	version := c.Version
	if version <= 0 {
		version = -1
	}
	return r.GetVersion(ctx, c.Subject, version, false)
}

func decodeNumbers(data json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errorf(codeUnprocessable, "the data is not JSON: %v", err)
	}
	return v, nil
}

// Deserialize reads a record in Confluent's wire format back into JSON,
// with the id of its schema.
func (r *Registry) Deserialize(ctx context.Context, payload []byte) (json.RawMessage, int, error) {
	if len(payload) < 5 || payload[0] != 0 {
		return nil, 0, fmt.Errorf("not in Confluent's wire format (magic byte 0 and a schema id)")
	}
	id := int(binary.BigEndian.Uint32(payload[1:5]))
	v, err := r.SchemaByID(ctx, id)
	if err != nil {
		return nil, id, err
	}
	r.mu.RLock()
	p, err := r.parse(v.SchemaType, v.Schema, v.References)
	r.mu.RUnlock()
	if err != nil {
		return nil, id, err
	}
	datum := payload[5:]
	switch s := p.(type) {
	case avroSchema:
		val, err := avroDecodeJSON(s.schema, datum)
		if err != nil {
			return nil, id, err
		}
		return mustJSON(val), id, nil
	case jsonSchema:
		return json.RawMessage(datum), id, nil
	case protobufSchema:
		md, rest, err := protoMessageAt(s.file, datum)
		if err != nil {
			return nil, id, err
		}
		msg := dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(rest, msg); err != nil {
			return nil, id, err
		}
		b, err := protojson.Marshal(msg)
		return b, id, err
	}
	return nil, id, fmt.Errorf("schema %d cannot deserialize", id)
}

// protoMessageAt reads the message index path and finds the message.
func protoMessageAt(f protoreflect.FileDescriptor, b []byte) (protoreflect.MessageDescriptor, []byte, error) {
	count, n := binary.Varint(b)
	if n <= 0 {
		return nil, nil, fmt.Errorf("no Protobuf message indexes")
	}
	b = b[n:]
	path := []int64{0}
	if count > 0 {
		path = path[:0]
		for range count {
			i, n := binary.Varint(b)
			if n <= 0 {
				return nil, nil, fmt.Errorf("short Protobuf message indexes")
			}
			path = append(path, i)
			b = b[n:]
		}
	}
	msgs := f.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range path {
		if i < 0 || int(i) >= msgs.Len() {
			return nil, nil, fmt.Errorf("message index %d out of range in the Protobuf schema", i)
		}
		md = msgs.Get(int(i))
		msgs = md.Messages()
	}
	return md, b, nil
}
