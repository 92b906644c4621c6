package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// produce writes one test record and shows it in the message browser.
func (c *Console) produce(w http.ResponseWriter, r *http.Request, _ *kafka) error {
	topic := r.PathValue("topic")
	rec := &kgo.Record{Topic: topic, Value: []byte(r.PostFormValue("value"))}
	if key := r.PostFormValue("key"); key != "" {
		rec.Key = []byte(key)
	}
	for i, line := range strings.Split(r.PostFormValue("headers"), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		hk, hv, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(hk) == "" {
			return badInput(fmt.Sprintf("Header line %d, %q, is not name: value.", i+1, line))
		}
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: strings.TrimSpace(hk), Value: []byte(strings.TrimSpace(hv))})
	}
	var opts []kgo.Opt
	if s := strings.TrimSpace(r.PostFormValue("partition")); s != "" {
		p, err := strconv.ParseInt(s, 10, 32)
		if err != nil || p < 0 {
			return badInput(fmt.Sprintf("The partition must be a number from 0 (or blank to choose by key), not %q.", s))
		}
		rec.Partition = int32(p)
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	// The page's client was opened before the form was read; a producer
	// needs its partitioner from the start, so it has its own client.
	who, _ := c.user(r)
	k, err := c.open(r.Context(), who, append(opts, kgo.RecordRetries(3), kgo.UnknownTopicRetries(1))...)
	if err != nil {
		return err
	}
	defer k.close()
	ctx, cancel := contextUntil(r, deadlineOf(r, c.opts.Timeout))
	defer cancel()
	if err := k.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return err
	}
	redirect(w, r, fmt.Sprintf("/topics/%s/messages?partition=%d&from=offset&offset=%d&produced=1", pathEscape(topic), rec.Partition, rec.Offset),
		fmt.Sprintf("Produced to partition %d at offset %d.", rec.Partition, rec.Offset))
	return nil
}
