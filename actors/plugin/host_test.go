package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/plugin"
	"github.com/samsa-io/samsa/testkit"
)

// recorder handles records of one topic, failing once on a chosen
// offset, and counts them in a metric of its own.
type recorder struct {
	topic  string
	failAt int64

	handed  chan int64 // every offset Handle is given, in order
	failed  bool
	once    sync.Once
	counter prometheus.Counter
}

func (r *recorder) Name() string     { return "recorder" }
func (r *recorder) Topics() []string { return []string{r.topic} }

func (r *recorder) Open(c *plugin.Context) error {
	var err error
	r.once.Do(func() {
		r.counter = prometheus.NewCounter(prometheus.CounterOpts{Name: "recorder_records_total", Help: "records seen"})
		err = c.Metrics().Register(r.counter)
	})
	return err
}

func (r *recorder) Handle(_ *plugin.Context, rec *kgo.Record) error {
	r.handed <- rec.Offset
	if rec.Offset == r.failAt && !r.failed {
		r.failed = true
		return errors.New("refusing this one once")
	}
	r.counter.Inc()
	return nil
}

// TestFailedRecordIsRedeliveredAlone: when Handle fails on offset 3, the
// plug-in restarts and gets offset 3 again, but not 0 to 2, which were
// committed before the restart; its own metric carries its name.
func TestFailedRecordIsRedeliveredAlone(t *testing.T) {
	b := testkit.StartInProcess(t, "group.initial.rebalance.delay.ms", "0")
	adm, cl := b.Admin(t)
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 6 {
		recs = append(recs, &kgo.Record{Topic: "in", Value: fmt.Appendf(nil, "%d", i)})
	}
	// One batch: the failure comes in the middle of it.
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	h := plugin.NewHost(plugin.Options{ClientOptions: []kgo.Opt{kgo.SeedBrokers(b.Addr)}, Metrics: reg, MinBackoff: time.Millisecond})
	p := &recorder{topic: "in", failAt: 3, handed: make(chan int64, 100)}
	if err := h.Start(p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop(context.Background()) })
	var got []int64
	timeout := time.After(30 * time.Second)
	for len(got) < 7 {
		select {
		case o := <-p.handed:
			got = append(got, o)
		case <-timeout:
			t.Fatalf("after 30s the plug-in was handed offsets %v", got)
		}
	}
	if want := []int64{0, 1, 2, 3, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("offsets handed to the plug-in %v, want %v", got, want)
	}
	st, _ := h.Stats("recorder")
	if st.Restarts != 1 || !strings.Contains(st.LastErr, "in/0@3: refusing this one once") {
		t.Errorf("stats %+v, want one restart naming in/0@3", st)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, mf := range mfs {
		if mf.GetName() == "recorder_records_total" {
			m := mf.GetMetric()[0]
			found = m.GetCounter().GetValue() == 6 && m.GetLabel()[0].GetValue() == "recorder"
		}
	}
	if !found {
		t.Error("recorder_records_total{plugin=\"recorder\"} is not 6 in the registry")
	}
}

// TestHostRefusesBadPlugins: a plug-in without topics or a second one
// with the same name is refused before anything runs.
func TestHostRefusesBadPlugins(t *testing.T) {
	h := plugin.NewHost(plugin.Options{})
	if err := h.Start(&recorder{}); err == nil || !strings.Contains(err.Error(), "at least one topic") {
		t.Errorf("a plug-in without topics: %v", err)
	}
	if err := h.Start(&recorder{topic: "a"}, &recorder{topic: "b"}); err == nil || !strings.Contains(err.Error(), "two plug-ins are named") {
		t.Errorf("two plug-ins with one name: %v", err)
	}
	if _, ok := h.Stats("recorder"); ok {
		t.Error("a refused plug-in has stats: something started")
	}
}
