package schemaregistry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// memLog applies records as they are appended, keeping them: the log
// without Kafka, for the registry's own tests.
type memLog struct {
	reg     *Registry
	records []Record
}

func (m *memLog) Append(_ context.Context, recs []Record) error {
	for _, r := range recs {
		m.records = append(m.records, r)
		m.reg.Apply(r.Key, r.Value)
	}
	return nil
}

func newMemRegistry(t *testing.T) (*Registry, *memLog) {
	t.Helper()
	l := &memLog{}
	reg := New(l)
	l.reg = reg
	reg.MarkReady()
	return reg, l
}

// serve mounts reg's handlers on a test server.
func serve(t *testing.T, reg *Registry) string {
	t.Helper()
	mux := http.NewServeMux()
	for p, h := range reg.Handlers() {
		mux.Handle(p, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// call does one request and decodes the JSON answer into a generic value.
func call(t *testing.T, method, url, body string) (int, any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return resp.StatusCode, string(raw)
	}
	return resp.StatusCode, v
}

func schemaBody(schema string) string {
	b, _ := json.Marshal(map[string]string{"schema": schema})
	return string(b)
}

func errorCode(v any) int {
	m, _ := v.(map[string]any)
	f, _ := m["error_code"].(float64)
	return int(f)
}

const customerV1 = `{"type":"record","name":"Customer","fields":[{"name":"customerName","type":"string"},{"name":"customerId","type":"int"}]}`

// TestRegistryOverHTTP goes through the API the way Confluent's clients
// do and checks each answer, the error bodies included.
func TestRegistryOverHTTP(t *testing.T) {
	reg, _ := newMemRegistry(t)
	base := serve(t, reg)

	code, v := call(t, "POST", base+"/subjects/c-value/versions", schemaBody(customerV1))
	if code != 200 || v.(map[string]any)["id"] != 1.0 {
		t.Fatalf("register = %d %v, want id 1", code, v)
	}
	// The same schema again, and under another subject: the same id.
	if _, v := call(t, "POST", base+"/subjects/c-value/versions", schemaBody(customerV1)); v.(map[string]any)["id"] != 1.0 {
		t.Errorf("re-register = %v, want id 1", v)
	}
	if _, v := call(t, "POST", base+"/subjects/other/versions", schemaBody(customerV1)); v.(map[string]any)["id"] != 1.0 {
		t.Errorf("same schema in another subject = %v, want id 1", v)
	}
	code, v = call(t, "GET", base+"/subjects/c-value/versions/latest", "")
	if m := v.(map[string]any); code != 200 || m["version"] != 1.0 || m["id"] != 1.0 || m["subject"] != "c-value" || m["schema"] != customerV1 {
		t.Errorf("latest = %d %v", code, v)
	}
	if code, v := call(t, "GET", base+"/schemas/ids/1", ""); code != 200 || v.(map[string]any)["schema"] != customerV1 {
		t.Errorf("/schemas/ids/1 = %d %v", code, v)
	}
	if code, v := call(t, "GET", base+"/schemas/ids/1/versions", ""); code != 200 || len(v.([]any)) != 2 {
		t.Errorf("/schemas/ids/1/versions = %d %v, want two uses", code, v)
	}
	if code, v := call(t, "GET", base+"/subjects/c-value/versions/1/schema", ""); code != 200 {
		t.Errorf("raw schema = %d %v", code, v)
	}
	// Lookup by content.
	if code, v := call(t, "POST", base+"/subjects/c-value", schemaBody(customerV1)); code != 200 || v.(map[string]any)["version"] != 1.0 {
		t.Errorf("lookup = %d %v", code, v)
	}

	// Not found errors.
	for _, c := range []struct {
		method, path, body string
		code               int
	}{
		{"GET", "/subjects/nope/versions", "", codeSubjectNotFound},
		{"GET", "/subjects/c-value/versions/9", "", codeVersionNotFound},
		{"GET", "/subjects/c-value/versions/zero", "", codeInvalidVersion},
		{"GET", "/schemas/ids/99", "", codeSchemaNotFound},
		{"POST", "/subjects/c-value", schemaBody(`"string"`), codeSchemaNotFound},
		{"POST", "/subjects/c-value/versions", schemaBody(`{"type":"record"}`), codeInvalidSchema},
		{"POST", "/subjects/c-value/versions", `{"schema":"x","schemaType":"XML"}`, codeInvalidSchema},
		{"PUT", "/config", `{"compatibility":"SIDEWAYS"}`, codeInvalidCompatibilityLevel},
		{"PUT", "/mode", `{"mode":"NAPPING"}`, codeInvalidMode},
		{"GET", "/config/c-value", "", codeSubjectConfigNotFound},
		{"POST", "/subjects/c-value/versions", `not json`, codeUnprocessable},
	} {
		code, v := call(t, c.method, base+c.path, c.body)
		if errorCode(v) != c.code || code != (&Error{Code: c.code}).Status() {
			t.Errorf("%s %s = %d %v, want error_code %d", c.method, c.path, code, v, c.code)
		}
	}

	// BACKWARD (the default) refuses a new field without default...
	incompatible := `{"type":"record","name":"Customer","fields":[{"name":"customerName","type":"string"},{"name":"customerId","type":"int"},{"name":"email","type":"string"}]}`
	code, v = call(t, "POST", base+"/subjects/c-value/versions", schemaBody(incompatible))
	if code != 409 || errorCode(v) != codeIncompatible || !strings.Contains(v.(map[string]any)["message"].(string), "email") {
		t.Errorf("incompatible under BACKWARD = %d %v, want 409 naming email", code, v)
	}
	code, v = call(t, "POST", base+"/compatibility/subjects/c-value/versions/latest?verbose=true", schemaBody(incompatible))
	if m := v.(map[string]any); code != 200 || m["is_compatible"] != false || len(m["messages"].([]any)) == 0 {
		t.Errorf("compatibility check = %d %v", code, v)
	}
	// ...and NONE on the subject lets it in, as version 2 with id 2.
	if code, v := call(t, "PUT", base+"/config/c-value", `{"compatibility":"NONE"}`); code != 200 || v.(map[string]any)["compatibility"] != "NONE" {
		t.Fatalf("PUT /config/c-value = %d %v", code, v)
	}
	code, v = call(t, "POST", base+"/subjects/c-value/versions", schemaBody(incompatible))
	if code != 200 || v.(map[string]any)["id"] != 2.0 {
		t.Errorf("register under NONE = %d %v, want id 2", code, v)
	}
	if _, v := call(t, "GET", base+"/config", ""); v.(map[string]any)["compatibilityLevel"] != "BACKWARD" {
		t.Errorf("global config = %v, want BACKWARD", v)
	}

	// Soft delete, then permanent; the permanent one needs the soft first.
	if code, v := call(t, "DELETE", base+"/subjects/c-value/versions/2?permanent=true", ""); errorCode(v) != codeVersionNotSoftDeleted {
		t.Errorf("permanent delete before soft = %d %v", code, v)
	}
	if code, v := call(t, "DELETE", base+"/subjects/c-value/versions/2", ""); code != 200 || v != 2.0 {
		t.Errorf("soft delete = %d %v", code, v)
	}
	if _, v := call(t, "GET", base+"/subjects/c-value/versions", ""); len(v.([]any)) != 1 {
		t.Errorf("versions after soft delete = %v", v)
	}
	if _, v := call(t, "GET", base+"/subjects/c-value/versions?deleted=true", ""); len(v.([]any)) != 2 {
		t.Errorf("versions with deleted = %v", v)
	}
	if code, v := call(t, "DELETE", base+"/subjects/c-value/versions/2?permanent=true", ""); code != 200 || v != 2.0 {
		t.Errorf("permanent delete = %d %v", code, v)
	}
	if code, v := call(t, "GET", base+"/schemas/ids/2", ""); errorCode(v) != codeSchemaNotFound {
		t.Errorf("id of a permanently deleted schema = %d %v", code, v)
	}
	// A new version after that gets a new id, never 2 again.
	v3 := `{"type":"record","name":"Customer","fields":[{"name":"customerName","type":"string"}]}`
	if _, v := call(t, "POST", base+"/subjects/c-value/versions", schemaBody(v3)); v.(map[string]any)["id"] != 3.0 {
		t.Errorf("register after hard delete = %v, want id 3", v)
	}
	// Whole subject.
	if code, v := call(t, "DELETE", base+"/subjects/other", ""); code != 200 || len(v.([]any)) != 1 {
		t.Errorf("delete subject = %d %v", code, v)
	}
	if code, v := call(t, "DELETE", base+"/subjects/other", ""); errorCode(v) != codeSubjectSoftDeleted {
		t.Errorf("delete subject twice = %d %v", code, v)
	}
	if _, v := call(t, "GET", base+"/subjects", ""); len(v.([]any)) != 1 {
		t.Errorf("subjects = %v, want only c-value", v)
	}
	if code, v := call(t, "DELETE", base+"/subjects/other?permanent=true", ""); code != 200 {
		t.Errorf("permanent subject delete = %d %v", code, v)
	}
	if _, v := call(t, "GET", base+"/subjects?deleted=true", ""); len(v.([]any)) != 1 {
		t.Errorf("subjects with deleted after permanent delete = %v", v)
	}

	// READONLY refuses writes; READWRITE again allows them.
	if code, v := call(t, "PUT", base+"/mode", `{"mode":"READONLY"}`); code != 200 {
		t.Fatalf("PUT /mode = %d %v", code, v)
	}
	if code, v := call(t, "POST", base+"/subjects/new/versions", schemaBody(`"string"`)); errorCode(v) != codeOperationNotPermitted {
		t.Errorf("register in READONLY = %d %v", code, v)
	}
	call(t, "PUT", base+"/mode", `{"mode":"READWRITE"}`)
	if code, v := call(t, "POST", base+"/subjects/new/versions", schemaBody(`"string"`)); code != 200 {
		t.Errorf("register in READWRITE = %d %v", code, v)
	}
	if code, v := call(t, "GET", base+"/schemas?latestOnly=true&subjectPrefix=c-", ""); code != 200 || len(v.([]any)) != 1 || v.([]any)[0].(map[string]any)["subject"] != "c-value" {
		t.Errorf("/schemas latest of c-* = %d %v", code, v)
	}
	if code, v := call(t, "GET", base+"/schemas", ""); code != 200 || len(v.([]any)) != 3 {
		t.Errorf("/schemas = %d %v, want the 3 live versions", code, v)
	}
	if code, v := call(t, "GET", base+"/schemas/types", ""); code != 200 || len(v.([]any)) != 3 {
		t.Errorf("/schemas/types = %d %v", code, v)
	}
}

// TestRecordsReplay rebuilds a registry from another's records, as a
// restart does from `_schemas`: same subjects, versions, ids, config.
func TestRecordsReplay(t *testing.T) {
	reg, log := newMemRegistry(t)
	ctx := context.Background()
	mustRegister := func(subject, schema string) *Version {
		v, err := reg.Register(ctx, subject, &RegisterRequest{Schema: schema}, false)
		if err != nil {
			t.Fatalf("register %s: %v", subject, err)
		}
		return v
	}
	a := mustRegister("a", customerV1)
	b := mustRegister("b", `"string"`)
	if _, err := reg.SetSetting(ctx, compatibilitySetting, "b", levelFull, false); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.DeleteSubject(ctx, "a", false); err != nil {
		t.Fatal(err)
	}

	again, _ := newMemRegistry(t)
	for _, r := range log.records {
		again.Apply(r.Key, r.Value)
	}
	if v, err := again.GetVersion(ctx, "b", -1, false); err != nil || v.ID != b.ID {
		t.Errorf("replayed b = %+v, %v; want id %d", v, err, b.ID)
	}
	if _, err := again.GetVersion(ctx, "a", 1, false); !isCode(err, codeSubjectNotFound) {
		t.Errorf("replayed soft-deleted a = %v, want subject not found", err)
	}
	if v, err := again.GetVersion(ctx, "a", 1, true); err != nil || v.ID != a.ID {
		t.Errorf("replayed a with deleted = %+v, %v", v, err)
	}
	if l, err := again.Setting(ctx, compatibilitySetting, "b", false); err != nil || l != levelFull {
		t.Errorf("replayed config of b = %q, %v", l, err)
	}
	c, err := again.Register(ctx, "c", &RegisterRequest{Schema: `"long"`}, false)
	if err != nil || c.ID != 3 {
		t.Errorf("next id after replay = %+v, %v; want 3", c, err)
	}
}

func isCode(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// TestRecordFormat pins the `_schemas` keys and values to Confluent's
// JSON, the format a Confluent registry reads.
func TestRecordFormat(t *testing.T) {
	r := schemaRecord(Version{Subject: "s", Version: 2, ID: 7, SchemaType: typeAvro, Schema: `"string"`}, false)
	if want := `{"keytype":"SCHEMA","subject":"s","version":2,"magic":1}`; string(r.Key) != want {
		t.Errorf("schema key %s, want %s", r.Key, want)
	}
	if want := `{"subject":"s","version":2,"id":7,"schema":"\"string\"","deleted":false}`; string(r.Value) != want {
		t.Errorf("schema value %s, want %s", r.Value, want)
	}
	for _, c := range []struct {
		got        Record
		key, value string
	}{
		{compatibilitySetting.record("", levelFull), `{"keytype":"CONFIG","subject":null,"magic":0}`, `{"compatibilityLevel":"FULL"}`},
		{compatibilitySetting.record("s", ""), `{"keytype":"CONFIG","subject":"s","magic":0}`, ``},
		{modeSetting.record("", modeImport), `{"keytype":"MODE","subject":null,"magic":0}`, `{"mode":"IMPORT"}`},
		{deleteSubjectRecord("s", 3), `{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}`, `{"subject":"s","version":3}`},
		{noopRecord(), `{"keytype":"NOOP","subject":null,"magic":0}`, ``},
	} {
		if string(c.got.Key) != c.key || string(c.got.Value) != c.value {
			t.Errorf("record %s / %s, want %s / %s", c.got.Key, c.got.Value, c.key, c.value)
		}
	}
}
