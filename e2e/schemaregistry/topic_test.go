package schemaregistry

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// TestNoTopicUntilFirstWrite: a broker whose users only read the
// registry has no `_schemas` topic; the first registration creates it
// compacted with one partition.
func TestNoTopicUntilFirstWrite(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := srClient(t, b.URL())
	if subjects, err := cl.Subjects(ctx); err != nil || len(subjects) != 0 {
		t.Fatalf("Subjects on a new broker = %v, %v", subjects, err)
	}
	adm, _ := b.Admin(t)
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("_schemas") {
		t.Fatal("_schemas exists before anything was registered")
	}
	if _, err := cl.CreateSchema(ctx, "x-value", sr.Schema{Schema: `"string"`}); err != nil {
		t.Fatal(err)
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, "_schemas")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cfgs.On("_schemas", nil)
	if err != nil {
		t.Fatalf("_schemas after the first registration: %v", err)
	}
	compact := false
	for _, kv := range c.Configs {
		compact = compact || (kv.Key == "cleanup.policy" && kv.Value != nil && *kv.Value == "compact")
	}
	if !compact {
		t.Errorf("_schemas configs %+v, want cleanup.policy=compact", c.Configs)
	}
}

// TestGarbageInTheTopic: records the registry cannot read (written to
// `_schemas` by someone else) are skipped, across a restart too, and
// disturb nothing.
func TestGarbageInTheTopic(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := srClient(t, b.URL())
	first, err := cl.CreateSchema(ctx, "a-value", sr.Schema{Schema: `"string"`})
	if err != nil {
		t.Fatal(err)
	}
	kc := b.Client(t, kgo.DefaultProduceTopic("_schemas"))
	garbage := []*kgo.Record{
		{Key: []byte("not json"), Value: []byte("{")},
		{Key: []byte(`{"keytype":"SCHEMA","subject":"a-value","version":9,"magic":1}`), Value: []byte(`{"id":"nine"}`)},
		{Key: []byte(`{"keytype":"SOMETHING_NEW","magic":0}`), Value: []byte(`{}`)},
		{Key: []byte(`{"keytype":"CONFIG","subject":null,"magic":0}`), Value: []byte(`[1,2]`)},
	}
	if err := kc.ProduceSync(ctx, garbage...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	second, err := cl.CreateSchema(ctx, "b-value", sr.Schema{Schema: `"long"`})
	if err != nil || second.ID == first.ID {
		t.Fatalf("registering after garbage = %+v, %v", second, err)
	}
	b.Restart()
	cl = srClient(t, b.URL())
	for _, want := range []sr.SubjectSchema{first, second} {
		got, err := cl.SchemaByVersion(ctx, want.Subject, -1)
		if err != nil || got.ID != want.ID {
			t.Errorf("after restart %s = %+v, %v; want id %d", want.Subject, got, err, want.ID)
		}
	}
	if res := cl.Compatibility(ctx); len(res) != 1 || res[0].Err != nil || res[0].Level != sr.CompatBackward {
		t.Errorf("global compatibility after a garbage CONFIG record = %+v, want the default BACKWARD", res)
	}
	resp, err := http.Get(b.URL() + "/subjects/a-value/versions/9")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the garbage version 9 answers %d, want 404", resp.StatusCode)
	}
}
