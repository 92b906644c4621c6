package restproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// TestPythonClient runs interop/python/rest_proxy.py (httpx): it creates
// a topic, produces, consumes back through a v2 instance and commits;
// the test checks what it read and the group's offset on the broker.
func TestPythonClient(t *testing.T) {
	p := startProxy(t)
	const topic, count = "py-orders", 12
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out := testkit.RunInteropPython(ctx, t, "rest_proxy.py", p.url, topic, fmt.Sprint(count))
	var got struct {
		Records []struct {
			Key    string `json:"key"`
			Value  struct{ N int }
			Offset int64 `json:"offset"`
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python printed %s: %v", out, err)
	}
	if len(got.Records) != count {
		t.Fatalf("python read %d records, want %d: %s", len(got.Records), count, out)
	}
	for i, r := range got.Records {
		if r.Key != fmt.Sprintf("k%d", i) || r.Value.N != i || r.Offset != int64(i) {
			t.Errorf("record %d = %+v", i, r)
		}
	}
	adm, _ := p.Admin(t)
	offs, err := adm.FetchOffsets(ctx, "py-group")
	if o, ok := offs.Lookup(topic, 0); err != nil || !ok || o.At != count {
		t.Errorf("py-group's committed offset = %+v, %v; want %d", o, err, count)
	}
}
