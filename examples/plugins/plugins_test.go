package plugins

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/plugin"
	"github.com/samsa-io/samsa/examples/plugins/enrich"
	"github.com/samsa-io/samsa/examples/plugins/jsonavro"
	"github.com/samsa-io/samsa/examples/plugins/router"
)

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func values(recs []*kgo.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Value)
	}
	slices.Sort(out)
	return out
}

// TestRouterRoutesByHeader: records reach the topic their region header
// names; records without a known region go to the dead-letter topic.
func TestRouterRoutesByHeader(t *testing.T) {
	r := router.New("orders", "region", map[string]string{"eu": "orders-eu", "us": "orders-us"}, "orders-unrouted")
	b := startBroker(t, t.TempDir(), r)
	createTopics(t, b, 2, "orders", "orders-eu", "orders-us", "orders-unrouted")
	want := map[string][]string{}
	var recs []*kgo.Record
	for i := range 30 {
		v := fmt.Sprintf("order-%02d", i)
		rec := &kgo.Record{Topic: "orders", Key: []byte(v), Value: []byte(v)}
		dest := "orders-unrouted"
		switch i % 4 {
		case 0:
			rec.Headers, dest = []kgo.RecordHeader{{Key: "region", Value: []byte("eu")}}, "orders-eu"
		case 1:
			rec.Headers, dest = []kgo.RecordHeader{{Key: "region", Value: []byte("us")}}, "orders-us"
		case 2:
			rec.Headers = []kgo.RecordHeader{{Key: "region", Value: []byte("mars")}}
		}
		want[dest] = append(want[dest], v)
		recs = append(recs, rec)
	}
	produce(t, client(t, b), recs...)
	for _, dest := range slices.Sorted(maps.Keys(want)) {
		got := readUntil(t, b, dest, func(rs []*kgo.Record) bool { return len(rs) >= len(want[dest]) })
		if !slices.Equal(values(got), want[dest]) {
			t.Errorf("%s holds %v, want %v", dest, values(got), want[dest])
		}
	}
	if st, _ := b.Plugins().Stats(r.Name()); st.Restarts != 0 || st.Handled != 30 {
		t.Errorf("router stats %+v, want 30 handled and no restart", st)
	}
}

// TestEnrichKeepsStateAcrossRestarts: the per-key count lives in the
// compacted state topic, so after the broker restarts the plug-in goes on
// counting where it stopped, and the records it handled before are not
// handled again (a clean stop commits them).
func TestEnrichKeepsStateAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, enrich.New("events", "events-enriched"))
	createTopics(t, b, 1, "events", "events-enriched")
	for i := range 5 {
		produce(t, client(t, b), &kgo.Record{Topic: "events", Key: []byte("k"), Value: fmt.Appendf(nil, "hello %d", i)})
	}
	got := readUntil(t, b, "events-enriched", func(rs []*kgo.Record) bool { return len(rs) >= 5 })
	for i, r := range got {
		if string(r.Value) != fmt.Sprintf("HELLO %d", i) || header(r, "key-seen-before") != fmt.Sprint(i) ||
			header(r, "enriched-from") != fmt.Sprintf("events/0@%d", i) {
			t.Errorf("enriched record %d: %q with headers %v", i, r.Value, r.Headers)
		}
	}
	stop(t, b)

	b = startBroker(t, dir, enrich.New("events", "events-enriched"))
	produce(t, client(t, b), &kgo.Record{Topic: "events", Key: []byte("k"), Value: []byte("after restart")})
	got = readUntil(t, b, "events-enriched", func(rs []*kgo.Record) bool { return len(rs) >= 6 })
	last := got[5]
	if string(last.Value) != "AFTER RESTART" || header(last, "key-seen-before") != "5" {
		t.Errorf("after the restart: %q with key-seen-before %q, want AFTER RESTART and 5", last.Value, header(last, "key-seen-before"))
	}
	// Nothing handled before the restart came again: once the group has
	// committed all six inputs, the output holds six records.
	adm := kadm.NewClient(client(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		os, err := adm.FetchOffsets(ctx, plugin.GroupID("enrich-events"))
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := os.Lookup("events", 0); ok && o.At == 6 {
			break
		}
	}
	ends, err := adm.ListEndOffsets(ctx, "events-enriched")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := ends.Lookup("events-enriched", 0); e.Offset != 6 {
		t.Errorf("events-enriched ends at %d after the restart, want 6 (records handled before were handled again)", e.Offset)
	}
}

// panicky wraps a plug-in and panics on every tenth record it is handed.
type panicky struct {
	plugin.Plugin
	calls atomic.Int64
}

func (p *panicky) KeepsState() bool { return true }

func (p *panicky) Handle(c *plugin.Context, r *kgo.Record) error {
	if p.calls.Add(1)%10 == 0 {
		panic(fmt.Sprintf("call %d: the tenth record again", p.calls.Load()))
	}
	return p.Plugin.Handle(c, r)
}

// TestPanickingPluginLosesNothing: a plug-in that panics on every tenth
// record is restarted each time, and every one of 100 records still
// comes out (at-least-once: some twice), while the broker serves other
// clients throughout.
func TestPanickingPluginLosesNothing(t *testing.T) {
	p := &panicky{Plugin: enrich.New("events", "events-enriched")}
	reg := prometheus.NewRegistry()
	b := startBrokerWith(t, t.TempDir(), reg, p)
	createTopics(t, b, 3, "events", "events-enriched", "bystander")
	cl := client(t, b)
	var recs []*kgo.Record
	want := map[string]bool{}
	for i := range 100 {
		v := fmt.Sprintf("event-%03d", i)
		want[string(bytesUpper(v))] = true
		recs = append(recs, &kgo.Record{Topic: "events", Key: fmt.Appendf(nil, "k%d", i%7), Value: []byte(v)})
	}
	produce(t, cl, recs...)
	got := readUntil(t, b, "events-enriched", func(rs []*kgo.Record) bool {
		seen := map[string]bool{}
		for _, r := range rs {
			seen[string(r.Value)] = true
		}
		return len(seen) == len(want)
	})
	for _, r := range got {
		if !want[string(r.Value)] {
			t.Errorf("unexpected output %q", r.Value)
		}
	}
	st, _ := b.Plugins().Stats(p.Name())
	if st.Restarts < 10 || st.Handled < 100 {
		t.Errorf("stats %+v: want at least 10 restarts (a panic per ten records) and 100 records handled", st)
	}
	if restarts := counter(t, reg, "samsa_plugin_restarts_total", p.Name()); restarts != float64(st.Restarts) {
		t.Errorf("samsa_plugin_restarts_total{plugin=%q} = %v, want %d", p.Name(), restarts, st.Restarts)
	}
	// The broker was not disturbed: another client produces and reads.
	produce(t, cl, &kgo.Record{Topic: "bystander", Value: []byte("still here")})
	if got := readUntil(t, b, "bystander", func(rs []*kgo.Record) bool { return len(rs) >= 1 }); string(got[0].Value) != "still here" {
		t.Errorf("bystander read %q", got[0].Value)
	}
	t.Logf("100 records, %d outputs (duplicates are redeliveries), %d restarts", len(got), st.Restarts)
}

// counter reads a counter of the plug-in named plugin from reg.
func counter(t *testing.T, reg *prometheus.Registry, name, plugin string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "plugin" && l.GetValue() == plugin {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{plugin=%q} in the registry", name, plugin)
	return 0
}

func bytesUpper(s string) []byte {
	out := []byte(s)
	for i, c := range out {
		if 'a' <= c && c <= 'z' {
			out[i] = c - 'a' + 'A'
		}
	}
	return out
}

// TestJSONToAvro: JSON records come out as Avro that decodes back to the
// same values; a record that does not fit the schema goes to the
// dead-letter topic with the reason, and the others still flow.
func TestJSONToAvro(t *testing.T) {
	const schema = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"},{"name":"note","type":["null","string"],"default":null}]}`
	conv, err := jsonavro.New("orders-json", "orders-avro", "orders-bad", schema)
	if err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, t.TempDir(), conv)
	createTopics(t, b, 1, "orders-json", "orders-avro", "orders-bad")
	produce(t, client(t, b),
		&kgo.Record{Topic: "orders-json", Value: []byte(`{"id":1,"item":"tea"}`)},
		&kgo.Record{Topic: "orders-json", Value: []byte(`{"id":"two","item":"milk"}`)},
		&kgo.Record{Topic: "orders-json", Value: []byte(`{"id":3,"item":"jam","note":"<b>gift</b>"}`)})
	got := readUntil(t, b, "orders-avro", func(rs []*kgo.Record) bool { return len(rs) >= 2 })
	s := avro.MustParse(schema)
	want := []map[string]any{{"id": int64(1), "item": "tea", "note": nil}, {"id": int64(3), "item": "jam", "note": "<b>gift</b>"}}
	for i, r := range got {
		var v map[string]any
		if err := avro.Unmarshal(s, r.Value, &v); err != nil {
			t.Fatalf("output %d is not Avro of the schema: %v", i, err)
		}
		if !maps.Equal(v, want[i]) || header(r, "content-type") != "avro/binary" {
			t.Errorf("output %d decodes to %v (content-type %q), want %v", i, v, header(r, "content-type"), want[i])
		}
	}
	bad := readUntil(t, b, "orders-bad", func(rs []*kgo.Record) bool { return len(rs) >= 1 })
	if string(bad[0].Value) != `{"id":"two","item":"milk"}` || !strings.Contains(header(bad[0], "error"), "id: want an integer") {
		t.Errorf("dead letter %q with error %q", bad[0].Value, header(bad[0], "error"))
	}
}
