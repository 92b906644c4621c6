// Package enrich is an example stateful plug-in: it copies each record of
// one topic to another with its value upper-cased and two headers added
// (where it came from, and how many records with its key came before),
// counting records per key in its compacted state topic.
package enrich

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/plugin"
)

// Enrich transforms the records of From into To.
type Enrich struct {
	From, To string
}

// New enriches from's records into to.
func New(from, to string) *Enrich { return &Enrich{From: from, To: to} }

// Name is "enrich-FROM".
func (e *Enrich) Name() string { return "enrich-" + e.From }

// Topics is the source topic.
func (e *Enrich) Topics() []string { return []string{e.From} }

// KeepsState: the per-key counts live in the state topic.
func (e *Enrich) KeepsState() bool { return true }

// Handle writes the enriched copy and counts the key.
func (e *Enrich) Handle(c *plugin.Context, rec *kgo.Record) error {
	key := string(rec.Key)
	var seen int64
	if v, ok := c.State().Get(key); ok {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return fmt.Errorf("state for key %q is %q, not a count: %w", key, v, err)
		}
		seen = n
	}
	c.State().Put(key, []byte(strconv.FormatInt(seen+1, 10)))
	headers := append(append([]kgo.RecordHeader(nil), rec.Headers...),
		kgo.RecordHeader{Key: "enriched-from", Value: fmt.Appendf(nil, "%s/%d@%d", rec.Topic, rec.Partition, rec.Offset)},
		kgo.RecordHeader{Key: "key-seen-before", Value: []byte(strconv.FormatInt(seen, 10))})
	c.Produce(&kgo.Record{Topic: e.To, Key: rec.Key, Value: bytes.ToUpper(rec.Value), Headers: headers, Timestamp: rec.Timestamp})
	return nil
}
