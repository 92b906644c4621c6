package schemaregistry

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/testkit"
)

// TestClusterOneWriter runs the registry on three brokers: writes sent to
// any of them are forwarded to the elected writer, so schemas registered
// at once through all three get distinct ids that every broker serves;
// when the writer stops, another broker takes over and ids carry on
// above the old ones, the old ones unchanged.
func TestClusterOneWriter(t *testing.T) {
	c := testkit.StartInProcessCluster(t, 3, "samsa.http.listeners", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	url := func(b *testkit.InProcess) string { return "http://" + b.Web.Addrs()[0].String() }

	// No retries while the writer is up: a forwarded registration
	// answers once the forwarding broker has read it, so franz-go's
	// CreateSchema, which reads right after registering, succeeds at once.
	ids := registerEverywhere(ctx, t, c.Brokers, url, "first", 9, false)
	checkIDs(ctx, t, c.Brokers, url, ids)

	writer := writerBroker(t, c, url)
	writer.Close()
	var alive []*testkit.InProcess
	for _, b := range c.Brokers {
		if b != writer {
			alive = append(alive, b)
		}
	}
	oldMax := 0
	for _, id := range ids {
		oldMax = max(oldMax, id)
	}
	checkIDs(ctx, t, alive, url, ids)
	more := registerEverywhere(ctx, t, alive, url, "second", 4, true)
	for subject, id := range more {
		if id <= oldMax {
			t.Errorf("%s registered after the writer stopped got id %d, not above %d", subject, id, oldMax)
		}
		ids[subject] = id
	}
	checkIDs(ctx, t, alive, url, ids)
}

// registerEverywhere registers n new schemas at once, round robin over
// brokers, retrying (if retry is set) while a new writer is being
// elected, and returns their ids by subject, checking that no two share
// one.
func registerEverywhere(ctx context.Context, t *testing.T, brokers []*testkit.InProcess, url func(*testkit.InProcess) string, prefix string, n int, retry bool) map[string]int {
	t.Helper()
	var mu sync.Mutex
	ids := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		b := brokers[i%len(brokers)]
		subject := fmt.Sprintf("%s-%d-value", prefix, i)
		schema := fmt.Sprintf(`{"type":"record","name":"R_%s_%d","fields":[{"name":"f","type":"int"}]}`, prefix, i)
		wg.Go(func() {
			cl := srClient(t, url(b))
			for {
				ss, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: schema})
				if err == nil {
					mu.Lock()
					ids[subject] = ss.ID
					mu.Unlock()
					return
				}
				if ctx.Err() != nil || !retry {
					t.Errorf("registering %s through %s: %v", subject, url(b), err)
					return
				}
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	}
	wg.Wait()
	seen := map[int]string{}
	for subject, id := range ids {
		if other, dup := seen[id]; dup {
			t.Errorf("%s and %s both got id %d", subject, other, id)
		}
		seen[id] = subject
	}
	return ids
}

// checkIDs expects every broker to serve every subject with its id
// (polling: a broker applies `_schemas` records as it reads them).
func checkIDs(ctx context.Context, t *testing.T, brokers []*testkit.InProcess, url func(*testkit.InProcess) string, ids map[string]int) {
	t.Helper()
	for _, b := range brokers {
		cl := srClient(t, url(b))
		for subject, id := range ids {
			for {
				got, err := cl.SchemaByVersion(ctx, subject, -1)
				if err == nil && got.ID == id {
					break
				}
				if ctx.Err() != nil {
					t.Errorf("%s on %s = %+v, %v; want id %d", subject, url(b), got, err, id)
					break
				}
				select {
				case <-ctx.Done():
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	}
}

// writerBroker reads the election's znode and finds the broker it names.
func writerBroker(t *testing.T, c *testkit.InProcessCluster, url func(*testkit.InProcess) string) *testkit.InProcess {
	t.Helper()
	conn, _, err := zk.Connect([]string{c.ZK.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	data, _, err := conn.Get("/samsa/samsa_schema_registry_writer")
	if err != nil {
		t.Fatalf("no registry writer elected: %v", err)
	}
	var w struct{ URL string }
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	for _, b := range c.Brokers {
		if strings.EqualFold(url(b), w.URL) {
			return b
		}
	}
	t.Fatalf("the writer %s is none of the brokers", w.URL)
	return nil
}
