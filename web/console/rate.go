package console

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// offsetSample is a topic's end offsets summed over its partitions at a
// moment: the message rate chart (static/console.js) divides the growth
// between two samples by the time between them.
type offsetSample struct {
	TimeMillis int64 `json:"t"`
	End        int64 `json:"end"`
}

func (c *Console) topicOffsets(w http.ResponseWriter, r *http.Request, k *kafka) error {
	topic := r.PathValue("topic")
	ends, err := k.adm.ListEndOffsets(k.ctx, topic)
	if err != nil {
		return err
	}
	if err := ends.Error(); err != nil {
		return err
	}
	s := offsetSample{TimeMillis: time.Now().UnixMilli()}
	ends.Each(func(o kadm.ListedOffset) { s.End += o.Offset })
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(s)
}
