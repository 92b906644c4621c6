package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// maxBrowse bounds the records one page shows.
const maxBrowse = 500

type messagesQuery struct {
	Partition int32
	From      string // "offset", "timestamp", "newest"
	Offset    int64
	Timestamp string // 2006-01-02T15:04[:05] UTC, as an <input type=datetime-local> sends it
	Limit     int
	Format    string
}

type messageRow struct {
	Offset    int64
	Timestamp int64
	Key       shown
	Value     shown
	Headers   []headerRow
}

type headerRow struct {
	Key   string
	Value shown
}

type messagesData struct {
	Topic      string
	Partitions []int32
	Query      messagesQuery
	Start, End int64 // the partition's log start and end offsets
	First      int64 // the offset the read began at
	Records    []messageRow
	Next       int64 // where the next page begins
	Formats    []string
	Incomplete string // why fewer records came than were there
}

func parseMessagesQuery(r *http.Request) (messagesQuery, error) {
	q := r.URL.Query()
	m := messagesQuery{From: q.Get("from"), Timestamp: q.Get("timestamp"), Limit: 20, Format: q.Get("format")}
	if m.From == "" {
		m.From = "newest"
	}
	if m.Format != formatJSON && m.Format != formatHex && m.Format != formatSchema {
		m.Format = formatText
	}
	if s := q.Get("partition"); s != "" {
		p, err := strconv.ParseInt(s, 10, 32)
		if err != nil || p < 0 {
			return m, badInput(fmt.Sprintf("The partition must be a number from 0, not %q.", s))
		}
		m.Partition = int32(p)
	}
	if s := q.Get("offset"); s != "" {
		o, err := strconv.ParseInt(s, 10, 64)
		if err != nil || o < 0 {
			return m, badInput(fmt.Sprintf("The offset must be a number from 0, not %q.", s))
		}
		m.Offset = o
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxBrowse {
			return m, badInput(fmt.Sprintf("Show from 1 to %d records, not %q.", maxBrowse, s))
		}
		m.Limit = n
	}
	switch m.From {
	case "offset", "newest":
	case "timestamp":
		if _, err := parseTimestamp(m.Timestamp); err != nil {
			return m, err
		}
	default:
		return m, badInput(fmt.Sprintf("Read from an offset, a timestamp or the newest records, not %q.", m.From))
	}
	return m, nil
}

// parseTimestamp reads a UTC time as a datetime-local input or RFC 3339
// sends it, or milliseconds since the epoch.
func parseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, badInput(fmt.Sprintf("The timestamp %q is neither a UTC date and time (2006-01-02T15:04:05) nor milliseconds since the epoch.", s))
}

func (c *Console) messagesPage(w http.ResponseWriter, r *http.Request, k *kafka) error {
	topic := r.PathValue("topic")
	q, err := parseMessagesQuery(r)
	if err != nil {
		return err
	}
	details, err := k.adm.ListTopics(k.ctx, topic)
	if err != nil {
		return err
	}
	t, ok := details[topic]
	if !ok || t.Err != nil {
		if ok {
			return t.Err
		}
		return &pageError{Status: http.StatusNotFound, Title: "No such topic", Detail: fmt.Sprintf("The cluster has no topic %q.", topic)}
	}
	if _, ok := t.Partitions[q.Partition]; !ok {
		return badInput(fmt.Sprintf("Topic %q has %d partition(s); there is no partition %d.", topic, len(t.Partitions), q.Partition))
	}
	d := messagesData{Topic: topic, Partitions: t.Partitions.Numbers(), Query: q, Formats: []string{formatText, formatJSON, formatHex}}
	if c.opts.Schemas != nil {
		d.Formats = append(d.Formats, formatSchema)
	} else if q.Format == formatSchema {
		d.Query.Format = formatText // no registry to decode with
	}
	starts, err := k.adm.ListStartOffsets(k.ctx, topic)
	if err != nil {
		return err
	}
	ends, err := k.adm.ListEndOffsets(k.ctx, topic)
	if err != nil {
		return err
	}
	s, _ := starts.Lookup(topic, q.Partition)
	e, _ := ends.Lookup(topic, q.Partition)
	if s.Err != nil {
		return s.Err
	}
	if e.Err != nil {
		return e.Err
	}
	d.Start, d.End = s.Offset, e.Offset
	switch q.From {
	case "newest":
		d.First = max(d.Start, d.End-int64(q.Limit))
	case "offset":
		d.First = min(max(q.Offset, d.Start), d.End)
	case "timestamp":
		ts, _ := parseTimestamp(q.Timestamp)
		after, err := k.adm.ListOffsetsAfterMilli(k.ctx, ts.UnixMilli(), topic)
		if err != nil {
			return err
		}
		a, _ := after.Lookup(topic, q.Partition)
		if a.Err != nil {
			return a.Err
		}
		d.First = a.Offset
	}
	d.Next = d.First
	if d.First < d.End {
		if err := c.readRecords(r, &d); err != nil {
			return err
		}
	}
	c.render(w, r, http.StatusOK, "messages", view{Title: "Messages in " + topic, Nav: "topics", Data: d})
	return nil
}

// readRecords reads up to the query's limit from d.First with a client
// of its own, stopping at the end offset seen when the page began.
func (c *Console) readRecords(r *http.Request, d *messagesData) error {
	who, _ := c.user(r)
	k, err := c.open(r.Context(), who,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{d.Topic: {d.Query.Partition: kgo.NewOffset().At(d.First)}}),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return err
	}
	defer k.close()
	// A short deadline of its own: records that are not there (control
	// records at the end of a transactional log) must not hold the page.
	deadline := time.Now().Add(min(c.opts.Timeout, 5*time.Second))
	for len(d.Records) < d.Query.Limit && d.Next < d.End && time.Now().Before(deadline) {
		ctx, cancel := contextUntil(r, deadline)
		fetches := k.cl.PollRecords(ctx, d.Query.Limit-len(d.Records))
		cancel()
		for _, fe := range fetches.Errors() {
			if ctx.Err() == nil {
				return fe.Err
			}
		}
		for _, rec := range fetches.Records() {
			if rec.Offset >= d.End {
				continue
			}
			row := messageRow{Offset: rec.Offset, Timestamp: rec.Timestamp.UnixMilli(),
				Key: c.show(r.Context(), rec.Key, rec.Key == nil, d.Query.Format), Value: c.show(r.Context(), rec.Value, rec.Value == nil, d.Query.Format)}
			for _, h := range rec.Headers {
				row.Headers = append(row.Headers, headerRow{Key: h.Key, Value: show(h.Value, h.Value == nil, formatText)})
			}
			d.Records = append(d.Records, row)
			d.Next = rec.Offset + 1
		}
	}
	if len(d.Records) < d.Query.Limit && d.Next < d.End {
		d.Incomplete = fmt.Sprintf("Stopped at offset %d before the end offset %d: no more records arrived in time (the rest may be transaction markers or aborted records).", d.Next, d.End)
	}
	return nil
}

// show renders a key or value in format, through the Schema Registry for
// the schema format.
func (c *Console) show(ctx context.Context, b []byte, isNull bool, format string) shown {
	if format == formatSchema && c.opts.Schemas != nil {
		return showDecoded(ctx, c.opts.Schemas, b, isNull)
	}
	return show(b, isNull, format)
}
