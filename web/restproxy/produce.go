package restproxy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/web/schemaregistry"
)

// produceRequest is one record of POST .../records (Confluent's v3
// ProduceRequest); a body may hold several, one after another.
type produceRequest struct {
	PartitionID *int32 `json:"partition_id"`
	Headers     []struct {
		Name  string  `json:"name"`
		Value *string `json:"value"` // base64
	} `json:"headers"`
	Key       *recordData `json:"key"`
	Value     *recordData `json:"value"`
	Timestamp *time.Time  `json:"timestamp"`
}

// recordData is a key or value: its format and data, and for the
// schema formats which schema (schema_id; or schema, registered if
// new; or subject/schema_version, latest by default; the subject is
// <topic>-key or <topic>-value unless named).
type recordData struct {
	Type          string          `json:"type"`
	Data          json.RawMessage `json:"data"`
	SchemaID      int             `json:"schema_id"`
	SchemaVersion int             `json:"schema_version"`
	Subject       string          `json:"subject"`
	Schema        string          `json:"schema"`
}

type produceResponse struct {
	ErrorCode   int          `json:"error_code"`
	ClusterID   string       `json:"cluster_id"`
	TopicName   string       `json:"topic_name"`
	PartitionID int32        `json:"partition_id"`
	Offset      int64        `json:"offset"`
	Timestamp   time.Time    `json:"timestamp"`
	Key         *sizedFormat `json:"key,omitempty"`
	Value       *sizedFormat `json:"value,omitempty"`
}

type sizedFormat struct {
	Type string `json:"type"`
	Size int    `json:"size"`
}

// The schema formats and the registry's names for them.
var (
	schemaFormats = map[string]string{"AVRO": "AVRO", "JSONSCHEMA": "JSON", "PROTOBUF": "PROTOBUF"}
	formatOf      = map[string]string{"AVRO": "AVRO", "JSON": "JSONSCHEMA", "PROTOBUF": "PROTOBUF"}
)

// produce writes the records of the body, answering each in turn (one
// JSON object per record, as Confluent's streaming produce does).
func (p *Proxy) produce(w http.ResponseWriter, r *http.Request) error {
	md, t, err := p.topic(r)
	if err != nil {
		return err
	}
	var pathPartition *int32
	if s := r.PathValue("partition"); s != "" {
		n, err := strconv.Atoi(s)
		if _, ok := t.Partitions[int32(n)]; err != nil || !ok {
			return errorf(codeNotFound, unknownTopicPartMesage)
		}
		n32 := int32(n)
		pathPartition = &n32
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	var out []any
	for {
		var req produceRequest
		if err := dec.Decode(&req); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			out = append(out, errorf(codeBadRequest, "Unrecognized request body: %v", err))
			break
		}
		if pathPartition != nil {
			req.PartitionID = pathPartition
		}
		resp, err := p.produceOne(r.Context(), clients(r).cl, md.Cluster, t.Topic, len(t.Partitions), &req)
		if err != nil {
			out = append(out, asError(err))
			continue
		}
		out = append(out, resp)
	}
	if len(out) == 1 {
		if e, ok := out[0].(*Error); ok {
			return e
		}
	}
	w.Header().Set("Content-Type", v3ContentType)
	enc := json.NewEncoder(w)
	for _, o := range out {
		_ = enc.Encode(o)
	}
	return nil
}

func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var se *schemaregistry.Error
	if errors.As(err, &se) {
		return &Error{Code: se.Code, Message: se.Message}
	}
	return errorf(codeKafkaError, "%v", err)
}

func (p *Proxy) produceOne(ctx context.Context, cl *kgo.Client, cluster, topic string, partitions int, req *produceRequest) (*produceResponse, error) {
	rec := &kgo.Record{Topic: topic, Context: ctx}
	if req.PartitionID != nil {
		if *req.PartitionID < 0 || int(*req.PartitionID) >= partitions {
			return nil, errorf(codeNotFound, unknownTopicPartMesage)
		}
		rec.Context = context.WithValue(ctx, chosenPartition{}, *req.PartitionID)
	}
	if req.Timestamp != nil {
		rec.Timestamp = *req.Timestamp
	}
	for _, h := range req.Headers {
		var v []byte
		if h.Value != nil {
			b, err := base64.StdEncoding.DecodeString(*h.Value)
			if err != nil {
				return nil, errorf(codeBadRequest, "header %s: the value is not base64: %v", h.Name, err)
			}
			v = b
		}
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Name, Value: v})
	}
	resp := &produceResponse{ErrorCode: http.StatusOK, ClusterID: cluster, TopicName: topic}
	var err error
	if rec.Key, resp.Key, err = p.encode(ctx, topic+"-key", req.Key); err != nil {
		return nil, err
	}
	if rec.Value, resp.Value, err = p.encode(ctx, topic+"-value", req.Value); err != nil {
		return nil, err
	}
	res := cl.ProduceSync(ctx, rec)
	if err := res.FirstErr(); err != nil {
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			return nil, errorf(codeNotFound, unknownTopicPartMesage)
		}
		return nil, kafkaError(err, "producing to "+topic)
	}
	resp.PartitionID, resp.Offset, resp.Timestamp = rec.Partition, rec.Offset, rec.Timestamp.UTC()
	return resp, nil
}

// encode turns a key or value into bytes per its type.
func (p *Proxy) encode(ctx context.Context, subject string, d *recordData) ([]byte, *sizedFormat, error) {
	if d == nil {
		return nil, nil, nil
	}
	typ := strings.ToUpper(d.Type)
	inferred := typ == ""
	if inferred {
		typ = "JSON"
		if d.SchemaID > 0 || d.SchemaVersion > 0 || d.Schema != "" {
			typ = "AVRO" // until the registry says what the schema is
		}
	}
	var b []byte
	switch typ {
	case "JSON":
		if len(d.Data) == 0 {
			return nil, nil, errorf(codeBadRequest, "JSON data is missing")
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, d.Data); err != nil {
			return nil, nil, errorf(codeBadRequest, "the data is not JSON: %v", err)
		}
		b = compact.Bytes()
	case "BINARY", "STRING":
		var s *string
		if err := json.Unmarshal(d.Data, &s); err != nil {
			return nil, nil, errorf(codeBadRequest, "%s data must be a JSON string: %v", typ, err)
		}
		if s != nil {
			b = []byte(*s)
			if typ == "BINARY" {
				var err error
				if b, err = base64.StdEncoding.DecodeString(*s); err != nil {
					return nil, nil, errorf(codeBadRequest, "BINARY data is not base64: %v", err)
				}
			}
		}
	case "AVRO", "JSONSCHEMA", "PROTOBUF":
		if p.cfg.Registry == nil {
			return nil, nil, errorf(codeBadRequest, "%s needs the schema registry, which is off", typ)
		}
		if d.Subject != "" {
			subject = d.Subject
		}
		choice := schemaregistry.SchemaChoice{SchemaType: schemaFormats[typ], ID: d.SchemaID, Subject: subject,
			Version: d.SchemaVersion, Schema: d.Schema}
		var used *schemaregistry.Version
		var err error
		if b, used, err = p.cfg.Registry.Serialize(ctx, choice, d.Data); err != nil {
			return nil, nil, err
		}
		if inferred {
			typ = formatOf[used.SchemaType]
		}
	default:
		return nil, nil, errorf(codeBadRequest, "unknown data type %s (want JSON, BINARY, STRING, AVRO, JSONSCHEMA or PROTOBUF)", d.Type)
	}
	return b, &sizedFormat{Type: typ, Size: len(b)}, nil
}
