package schemaregistry

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// TestRestartKeepsIDs registers schemas, restarts the broker on the same
// data directory and finds every subject, version and id as it was; a
// schema registered afterwards gets an id never used before.
func TestRestartKeepsIDs(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := srClient(t, b.URL())
	before := map[string]sr.SubjectSchema{}
	maxID := 0
	for i := range 4 {
		subject := fmt.Sprintf("s%d-value", i)
		schema := fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"f","type":"int"}]}`, i)
		ss, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: schema})
		if err != nil {
			t.Fatalf("CreateSchema %s: %v", subject, err)
		}
		before[subject] = ss
		maxID = max(maxID, ss.ID)
	}
	if res := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatFull}, "s0-value"); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}

	b.Restart()
	cl = srClient(t, b.URL())
	for subject, want := range before {
		got, err := cl.SchemaByVersion(ctx, subject, -1)
		if err != nil {
			t.Errorf("after restart, %s: %v", subject, err)
			continue
		}
		if got.ID != want.ID || got.Version != want.Version || got.Schema.Schema != want.Schema.Schema {
			t.Errorf("after restart, %s = id %d version %d, want id %d version %d", subject, got.ID, got.Version, want.ID, want.Version)
		}
	}
	if res := cl.Compatibility(ctx, "s0-value"); res[0].Err != nil || res[0].Level != sr.CompatFull {
		t.Errorf("after restart, s0-value compatibility = %+v", res)
	}
	next, err := cl.CreateSchema(ctx, "after-value", sr.Schema{Schema: `"string"`})
	if err != nil || next.ID <= maxID {
		t.Errorf("registered after restart: %+v, %v; want an id above %d", next, err, maxID)
	}
}
