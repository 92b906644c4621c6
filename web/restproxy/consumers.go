package restproxy

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerKey names a consumer instance: its group and instance id.
type consumerKey struct{ group, name string }

// consumer is a v2 consumer instance: a group member of its own, with
// the format its records are answered in.
type consumer struct {
	key    consumerKey
	user   string // who made it ("" anonymous): only they may use it
	format string // binary, json, avro, jsonschema, protobuf
	cl     *kgo.Client

	mu       sync.Mutex // one request at a time
	topics   []string
	lastUsed time.Time
}

func (c *consumer) close() { c.cl.Close() }

// formats are the v2 embedded formats and whether the registry decodes
// them.
var formats = map[string]bool{"binary": false, "json": false, "avro": true, "jsonschema": true, "protobuf": true}

type createConsumerRequest struct {
	Name             string `json:"name"`
	Format           string `json:"format"`
	AutoOffsetReset  string `json:"auto.offset.reset"`
	AutoCommitEnable string `json:"auto.commit.enable"`
}

func (p *Proxy) createConsumer(w http.ResponseWriter, r *http.Request) error {
	var req createConsumerRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Format == "" {
		req.Format = "binary"
	}
	req.Format = strings.ToLower(req.Format)
	if _, ok := formats[req.Format]; !ok {
		return errorf(codeUnprocessable, "Invalid format type %s (want binary, json, avro, jsonschema or protobuf).", req.Format)
	}
	if req.Name == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		req.Name = "rest-consumer-" + hex.EncodeToString(b[:])
	}
	reset := kgo.NewOffset().AtEnd()
	switch strings.ToLower(req.AutoOffsetReset) {
	case "", "latest":
	case "earliest", "smallest":
		reset = kgo.NewOffset().AtStart()
	default:
		return errorf(codeUnprocessable, "Invalid auto.offset.reset %s (want earliest or latest).", req.AutoOffsetReset)
	}
	key := consumerKey{group: r.PathValue("group"), name: req.Name}
	owner := clients(r)
	opts := append(slices.Clone(owner.opts), kgo.ConsumerGroup(key.group), kgo.ConsumeResetOffset(reset), kgo.ClientID(key.name))
	if auto, _ := strconv.ParseBool(req.AutoCommitEnable); !auto {
		opts = append(opts, kgo.DisableAutoCommit())
	}
	p.consumersMu.Lock()
	defer p.consumersMu.Unlock()
	if _, exists := p.consumers[key]; exists {
		return errorf(codeConsumerExists, "Consumer with specified consumer ID already exists in the specified consumer group.")
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return errorf(codeKafkaError, "consumer: %v", err)
	}
	p.consumers[key] = &consumer{key: key, user: owner.user, format: req.Format, cl: cl, lastUsed: time.Now()}
	writeJSON(w, v2ContentType, http.StatusOK, map[string]string{"instance_id": key.name,
		"base_uri": base(r) + "/consumers/" + key.group + "/instances/" + key.name})
	return nil
}

// onInstance serves fn with the path's consumer instance, locked for
// the request.
func (p *Proxy) onInstance(fn func(http.ResponseWriter, *http.Request, *consumer) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := p.instance(r)
		if err != nil {
			return err
		}
		defer c.mu.Unlock()
		return fn(w, r, c)
	}
}

// instance finds the path's consumer instance and locks it; the caller
// unlocks.
func (p *Proxy) instance(r *http.Request) (*consumer, error) {
	key := consumerKey{group: r.PathValue("group"), name: r.PathValue("instance")}
	p.consumersMu.Lock()
	c := p.consumers[key]
	p.consumersMu.Unlock()
	if c == nil || c.user != clients(r).user {
		return nil, errorf(codeConsumerNotFound, "Consumer instance not found.")
	}
	c.mu.Lock()
	c.lastUsed = time.Now()
	return c, nil
}

func (p *Proxy) deleteConsumer(w http.ResponseWriter, r *http.Request, c *consumer) error {
	p.consumersMu.Lock()
	delete(p.consumers, c.key)
	p.consumersMu.Unlock()
	c.close() // leaves the group
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (p *Proxy) subscribe(w http.ResponseWriter, r *http.Request, c *consumer) error {
	var req struct {
		Topics       []string `json:"topics"`
		TopicPattern string   `json:"topic_pattern"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.TopicPattern != "" || len(req.Topics) == 0 {
		return errorf(codeUnprocessable, "A subscription needs a list of topics (topic_pattern is not supported).")
	}
	c.cl.AddConsumeTopics(req.Topics...)
	c.topics = append(c.topics, req.Topics...)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (p *Proxy) subscription(w http.ResponseWriter, r *http.Request, c *consumer) error {
	topics := append([]string{}, c.topics...)
	writeJSON(w, v2ContentType, http.StatusOK, map[string][]string{"topics": topics})
	return nil
}

func (p *Proxy) unsubscribe(w http.ResponseWriter, r *http.Request, c *consumer) error {
	c.cl.PurgeTopicsFromConsuming(c.topics...)
	c.topics = nil
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// consumerRecord is one record of GET .../records.
type consumerRecord struct {
	Topic     string          `json:"topic"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
}

// records fetches what is there within ?timeout ms (default 1000), at
// most ?max_bytes of values, in the instance's format.
func (p *Proxy) records(w http.ResponseWriter, r *http.Request, c *consumer) error {
	if accept := r.Header.Get("Accept"); accept != "" && !strings.Contains(accept, "vnd.kafka."+c.format+".v2") &&
		!strings.Contains(accept, "*/*") && !strings.Contains(accept, "application/json") {
		return errorf(codeInvalidFormat, "The requested embedded data format does not match the deserializer for this consumer instance")
	}
	timeout := time.Second
	if ms, err := strconv.Atoi(r.URL.Query().Get("timeout")); err == nil && ms >= 0 {
		timeout = time.Duration(ms) * time.Millisecond
	}
	maxBytes := -1
	if n, err := strconv.Atoi(r.URL.Query().Get("max_bytes")); err == nil && n > 0 {
		maxBytes = n
	}
	ctx, cancel := contextWithTimeout(r, timeout)
	defer cancel()
	fetches := c.cl.PollRecords(ctx, 500)
	out := []consumerRecord{}
	var decodeErr error
	size := 0
	fetches.EachRecord(func(rec *kgo.Record) {
		if decodeErr != nil || (maxBytes > 0 && size > 0 && size+len(rec.Value) > maxBytes) {
			return
		}
		key, err := p.decode(r, c.format, rec.Key)
		if err == nil {
			var value json.RawMessage
			value, err = p.decode(r, c.format, rec.Value)
			if err == nil {
				size += len(rec.Value)
				out = append(out, consumerRecord{Topic: rec.Topic, Key: key, Value: value, Partition: rec.Partition, Offset: rec.Offset})
				return
			}
		}
		decodeErr = errorf(codeKafkaError, "record %s/%d@%d cannot be read as %s: %v", rec.Topic, rec.Partition, rec.Offset, c.format, err)
	})
	if decodeErr != nil {
		return decodeErr
	}
	writeJSON(w, "application/vnd.kafka."+c.format+".v2+json", http.StatusOK, out)
	return nil
}

// decode renders a key or value in format: base64 (binary), the JSON
// itself (json), JSON decoded through the registry (the schema formats).
func (p *Proxy) decode(r *http.Request, format string, b []byte) (json.RawMessage, error) {
	if b == nil {
		return json.RawMessage("null"), nil
	}
	switch format {
	case "binary":
		return json.Marshal(base64.StdEncoding.EncodeToString(b))
	case "json":
		if !json.Valid(b) {
			return nil, errors.New("not JSON")
		}
		return b, nil
	}
	if p.cfg.Registry == nil {
		return nil, errors.New("the schema registry is off")
	}
	v, _, err := p.cfg.Registry.Deserialize(r.Context(), b)
	return v, err
}

type topicPartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Metadata  string `json:"metadata,omitempty"`
}

// commitOffsets commits the offsets given (each the last record
// consumed: the group resumes after it), or, with no body, everything
// this instance has fetched.
func (p *Proxy) commitOffsets(w http.ResponseWriter, r *http.Request, c *consumer) error {
	var req struct {
		Offsets []topicPartitionOffset `json:"offsets"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if len(req.Offsets) == 0 {
		if err := c.cl.CommitUncommittedOffsets(r.Context()); err != nil {
			return kafkaError(err, "commit")
		}
		w.WriteHeader(http.StatusOK)
		return nil
	}
	// As the group's member (its generation), not as an admin: the
	// coordinator refuses member-less commits to a group with members.
	offsets := map[string]map[int32]kgo.EpochOffset{}
	for _, o := range req.Offsets {
		if offsets[o.Topic] == nil {
			offsets[o.Topic] = map[int32]kgo.EpochOffset{}
		}
		offsets[o.Topic][o.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o.Offset + 1}
	}
	var commitErr error
	c.cl.CommitOffsetsSync(r.Context(), offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil && commitErr == nil {
					commitErr = fmt.Errorf("%s/%d: %w", t.Topic, p.Partition, err)
				}
			}
		}
	})
	if commitErr != nil {
		return kafkaError(commitErr, "commit")
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// committedOffsets answers the group's committed offsets for the
// partitions in the body.
func (p *Proxy) committedOffsets(w http.ResponseWriter, r *http.Request, c *consumer) error {
	var req struct {
		Partitions []struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
		} `json:"partitions"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	fetched, err := kadm.NewClient(c.cl).FetchOffsets(r.Context(), c.key.group)
	if err != nil {
		return kafkaError(err, "fetching offsets")
	}
	out := []topicPartitionOffset{}
	for _, tp := range req.Partitions {
		o, ok := fetched.Lookup(tp.Topic, tp.Partition)
		at := int64(-1)
		if ok && o.Err == nil {
			at = o.At
		}
		out = append(out, topicPartitionOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: at, Metadata: o.Metadata})
	}
	writeJSON(w, v2ContentType, http.StatusOK, map[string]any{"offsets": out})
	return nil
}

// reapIdleConsumers closes instances nobody used for ConsumerIdle, as
// Confluent's consumer.instance.timeout.ms does: a client that went away
// without deleting its instance does not hold partitions forever.
func (p *Proxy) reapIdleConsumers() {
	defer close(p.done)
	tick := time.NewTicker(max(p.cfg.ConsumerIdle/10, 100*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-tick.C:
			p.consumersMu.Lock()
			for k, c := range p.consumers {
				if c.mu.TryLock() {
					if now.Sub(c.lastUsed) > p.cfg.ConsumerIdle {
						delete(p.consumers, k)
						c.close()
					}
					c.mu.Unlock()
				}
			}
			p.consumersMu.Unlock()
		}
	}
}
