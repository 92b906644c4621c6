package datapath

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var shared = testkit.SharedBroker{Config: testkit.BrokerConfig{}}

func TestMain(m *testing.M) { os.Exit(shared.RunTests(m)) }

// sharedBroker returns the broker that the tests which neither kill nor
// proxy it share, starting it on first use.
func sharedBroker(t *testing.T) *testkit.BrokerProcess {
	t.Helper()
	return shared.Get(t)
}

// newClient returns a franz-go client for addr, closed when t ends.
func newClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return testkit.NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("samsa-datapath"),
		kgo.RetryTimeout(20 * time.Second)}, opts...)...)
}

// deadline is a context for one step of a test.
func deadline(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var topicSeq atomic.Int64

// topicName makes a topic name unique to this run and test.
func topicName(t testing.TB, suffix string) string {
	base := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, t.Name())
	if len(base) > 80 {
		base = base[len(base)-80:]
	}
	return fmt.Sprintf("%s-%d-%s", base, topicSeq.Add(1), suffix)
}

// createTopic creates a topic with the given partitions (replication 1)
// through kadm and fails t if the broker refuses.
func createTopic(t testing.TB, addr, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("samsa-datapath-admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopics(deadline(t, 30*time.Second), partitions, 1, configs, topic)
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	r, err := resp.On(topic, nil)
	if err != nil || r.Err != nil {
		t.Fatalf("create topic %s: %v %v: %s", topic, err, r.Err, r.ErrMessage)
	}
}

// apiVersions asks the broker which APIs it serves (key -> max version).
func apiVersions(t testing.TB, addr string) map[int16]int16 {
	t.Helper()
	cl := newClient(t, addr)
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(deadline(t, 20*time.Second), cl)
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	out := make(map[int16]int16, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		out[k.ApiKey] = k.MaxVersion
	}
	return out
}

// requireDataPath skips t when the broker does not advertise the data path
// APIs yet (they are being built alongside these tests); in CI it fails
// instead, as a missing API there is a regression.
func requireDataPath(t *testing.T, addr string) {
	t.Helper()
	served := apiVersions(t, addr)
	var missing []string
	for _, k := range []int16{0, 1, 2, 22} { // Produce, Fetch, ListOffsets, InitProducerId
		if _, ok := served[k]; !ok {
			missing = append(missing, kmsg.NameForKey(k))
		}
	}
	if len(missing) > 0 {
		testkit.Require(t, false, "the broker does not serve "+strings.Join(missing, ", ")+" yet")
	}
}

// recordCount is how many records the big round trips move per codec:
// 1,000,000 by default, 100,000 under the race detector, 50,000 with
// -short, or SAMSA_DATAPATH_RECORDS.
func recordCount(t testing.TB) int {
	if v := os.Getenv("SAMSA_DATAPATH_RECORDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("SAMSA_DATAPATH_RECORDS=%q: want a positive integer", v)
		}
		return n
	}
	if testing.Short() {
		return 50_000
	}
	if raceEnabled {
		return 100_000
	}
	return 1_000_000
}

// scaled returns n, or less (never below min) under -short (n/10) or the
// race detector (n/4).
func scaled(n, min int) int {
	switch {
	case testing.Short():
		return max(n/10, min)
	case raceEnabled:
		return max(n/4, min)
	}
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }

// ackWatch counts a producer's acknowledgements and lets a test wait
// until the count reaches a number, without polling.
type ackWatch struct {
	acked   atomic.Int64
	target  atomic.Int64
	reached atomic.Pointer[chan struct{}]
}

// ack records one acknowledgement; call it from produce promises.
func (w *ackWatch) ack() {
	if w.acked.Add(1) >= w.target.Load() {
		if ch := w.reached.Swap(nil); ch != nil {
			close(*ch)
		}
	}
}

func (w *ackWatch) count() int64 { return w.acked.Load() }

// when returns a channel closed once n acknowledgements have been counted.
// One wait at a time.
func (w *ackWatch) when(n int64) <-chan struct{} {
	ch := make(chan struct{})
	w.target.Store(n)
	w.reached.Store(&ch)
	if w.acked.Load() >= n {
		if p := w.reached.Swap(nil); p != nil {
			close(*p)
		}
	}
	return ch
}
