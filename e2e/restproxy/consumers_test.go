package restproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

const v2 = "application/vnd.kafka.v2+json"

type v2Record struct {
	Topic     string          `json:"topic"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
}

// fetchAll polls GET .../records until n records came (the first polls
// may return none while the instance joins its group).
func fetchAll(t *testing.T, instanceURL, format string, n int) []v2Record {
	t.Helper()
	var all []v2Record
	deadline := time.Now().Add(30 * time.Second)
	for len(all) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fetched %d of %d records: %+v", len(all), n, all)
		}
		req, err := http.NewRequest("GET", instanceURL+"/records?timeout=500", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/vnd.kafka."+format+".v2+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var batch []v2Record
		err = json.NewDecoder(resp.Body).Decode(&batch)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			t.Fatalf("GET records = %d, %v", resp.StatusCode, err)
		}
		all = append(all, batch...)
	}
	return all
}

// TestV2Consumer produces through v3, consumes through a v2 instance in
// json format, commits and reads the offsets back (with franz-go's
// admin too), deletes the instance; then an avro instance decodes AVRO
// records through the registry.
func TestV2Consumer(t *testing.T) {
	p := startProxy(t)
	topics := createTopic(t, p, "clicks", 1)
	const n = 5
	var batch strings.Builder
	for i := range n {
		fmt.Fprintf(&batch, `{"key":{"type":"JSON","data":%d},"value":{"type":"JSON","data":{"n":%d}}}`, i, i)
	}
	if code, body := do(t, "POST", topics+"/clicks/records", "application/json", batch.String()); code != 200 {
		t.Fatalf("produce = %d %s", code, body)
	}

	var created struct {
		InstanceID string `json:"instance_id"`
		BaseURI    string `json:"base_uri"`
	}
	if code := doJSON(t, "POST", p.url+"/consumers/g1", v2, `{"name":"c1","format":"json","auto.offset.reset":"earliest","auto.commit.enable":"false"}`, &created); code != 200 || created.InstanceID != "c1" || !strings.HasSuffix(created.BaseURI, "/consumers/g1/instances/c1") {
		t.Fatalf("create instance = %d %+v", code, created)
	}
	var dup errorBody
	if code := doJSON(t, "POST", p.url+"/consumers/g1", v2, `{"name":"c1","format":"json"}`, &dup); code != 409 || dup.ErrorCode != 40902 {
		t.Errorf("the same instance again = %d %+v", code, dup)
	}
	inst := created.BaseURI
	if code, body := do(t, "POST", inst+"/subscription", v2, `{"topics":["clicks"]}`); code != 204 {
		t.Fatalf("subscribe = %d %s", code, body)
	}
	var sub struct{ Topics []string }
	if code := doJSON(t, "GET", inst+"/subscription", "", "", &sub); code != 200 || len(sub.Topics) != 1 || sub.Topics[0] != "clicks" {
		t.Errorf("subscription = %d %+v", code, sub)
	}
	got := fetchAll(t, inst, "json", n)
	for i, r := range got {
		if r.Topic != "clicks" || r.Offset != int64(i) || string(r.Key) != fmt.Sprint(i) || string(r.Value) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Errorf("record %d = %+v key %s value %s", i, r, r.Key, r.Value)
		}
	}
	last := got[len(got)-1]
	if code, body := do(t, "POST", inst+"/offsets", v2, fmt.Sprintf(`{"offsets":[{"topic":"clicks","partition":0,"offset":%d}]}`, last.Offset)); code != 200 {
		t.Fatalf("commit = %d %s", code, body)
	}
	var committed struct {
		Offsets []struct {
			Topic     string
			Partition int32
			Offset    int64
		}
	}
	if code := doJSON(t, "GET", inst+"/offsets", v2, `{"partitions":[{"topic":"clicks","partition":0}]}`, &committed); code != 200 || len(committed.Offsets) != 1 || committed.Offsets[0].Offset != last.Offset+1 {
		t.Errorf("committed offsets = %d %+v, want %d", code, committed, last.Offset+1)
	}
	adm, _ := p.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	offs, err := adm.FetchOffsets(ctx, "g1")
	if o, ok := offs.Lookup("clicks", 0); err != nil || !ok || o.At != last.Offset+1 {
		t.Errorf("the group's offset for clicks/0 per the broker = %+v, %v; want %d", o, err, last.Offset+1)
	}
	if code, body := do(t, "DELETE", inst, v2, ""); code != 204 {
		t.Errorf("delete instance = %d %s", code, body)
	}
	var gone errorBody
	if code := doJSON(t, "GET", inst+"/records", "", "", &gone); code != 404 || gone.ErrorCode != 40403 {
		t.Errorf("records of a deleted instance = %d %+v", code, gone)
	}

	// AVRO through the registry, read back by an avro instance.
	schema := `{"type":"record","name":"Click","fields":[{"name":"page","type":"string"},{"name":"ms","type":"long"}]}`
	createTopic(t, p, "avro-clicks", 1)
	if code, body := do(t, "POST", topics+"/avro-clicks/records", "application/json",
		fmt.Sprintf(`{"value":{"type":"AVRO","schema":%q,"data":{"page":"/home","ms":1700000000000}}}`, schema)); code != 200 {
		t.Fatalf("AVRO produce = %d %s", code, body)
	}
	if code := doJSON(t, "POST", p.url+"/consumers/g2", v2, `{"name":"a1","format":"avro","auto.offset.reset":"earliest"}`, &created); code != 200 {
		t.Fatalf("create avro instance = %d", code)
	}
	if code, body := do(t, "POST", created.BaseURI+"/subscription", v2, `{"topics":["avro-clicks"]}`); code != 204 {
		t.Fatalf("subscribe = %d %s", code, body)
	}
	rec := fetchAll(t, created.BaseURI, "avro", 1)[0]
	var click struct {
		Page string `json:"page"`
		MS   int64  `json:"ms"`
	}
	if err := json.Unmarshal(rec.Value, &click); err != nil || click.Page != "/home" || click.MS != 1700000000000 {
		t.Errorf("avro record value %s (%v)", rec.Value, err)
	}
}
