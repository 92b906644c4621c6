package schemaregistry

import (
	"context"
	"strings"
	"testing"
)

// expectProblem parses reader and writer of schemaType and checks that
// reading writer's data with reader has a problem naming problem ("":
// none).
func expectProblem(t *testing.T, schemaType, reader, writer, problem string) {
	t.Helper()
	r, err := parseSchema(schemaType, reader, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := parseSchema(schemaType, writer, nil)
	if err != nil {
		t.Fatal(err)
	}
	problems := r.readProblems(w)
	switch {
	case problem == "" && len(problems) > 0:
		t.Errorf("unexpected problems: %v", problems)
	case problem != "" && !strings.Contains(strings.Join(problems, "; "), problem):
		t.Errorf("problems %v, want one about %q", problems, problem)
	}
}

// TestJSONSchemaCompatibility checks the JSON Schema rules: each case
// says whether instances valid under writer stay valid under reader.
func TestJSONSchemaCompatibility(t *testing.T) {
	obj := func(props, extra string) string {
		return `{"type":"object","properties":{` + props + `}` + extra + `}`
	}
	cases := []struct {
		name, reader, writer, problem string
	}{
		{"same", obj(`"a":{"type":"string"}`, ""), obj(`"a":{"type":"string"}`, ""), ""},
		{"integer widened to number", obj(`"a":{"type":"number"}`, ""), obj(`"a":{"type":"integer"}`, ""), ""},
		{"number narrowed to integer", obj(`"a":{"type":"integer"}`, ""), obj(`"a":{"type":"number"}`, ""), "type number no longer allowed"},
		{"type changed", obj(`"a":{"type":"string"}`, ""), obj(`"a":{"type":"integer"}`, ""), "no longer allowed"},
		{"required added", obj(`"a":{"type":"string"}`, `,"required":["a"]`), obj(`"a":{"type":"string"}`, ""), "required property a added"},
		{"required removed", obj(`"a":{"type":"string"}`, ""), obj(`"a":{"type":"string"}`, `,"required":["a"]`), ""},
		{"property added to closed model", obj(`"a":{"type":"string"},"b":{"type":"string"}`, ""), obj(`"a":{"type":"string"}`, `,"additionalProperties":false`), ""},
		{"property added to open model", obj(`"a":{"type":"string"},"b":{"type":"string"}`, ""), obj(`"a":{"type":"string"}`, ""), "open content model"},
		{"property removed from closed model", obj(``, `,"additionalProperties":false`), obj(`"a":{"type":"string"}`, `,"additionalProperties":false`), "closed content model"},
		{"property removed from open model", obj(``, ""), obj(`"a":{"type":"string"}`, ""), ""},
		{"enum value added", `{"enum":["A","B","C"]}`, `{"enum":["A","B"]}`, ""},
		{"enum value removed", `{"enum":["A"]}`, `{"enum":["A","B"]}`, "enum value B removed"},
		{"maxLength lowered", `{"type":"string","maxLength":5}`, `{"type":"string","maxLength":10}`, "maxLength lowered"},
		{"maxLength raised", `{"type":"string","maxLength":10}`, `{"type":"string","maxLength":5}`, ""},
		{"minimum raised", `{"type":"number","minimum":1}`, `{"type":"number"}`, "minimum raised"},
		{"array items narrowed", `{"type":"array","items":{"type":"integer"}}`, `{"type":"array","items":{"type":"number"}}`, "items"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectProblem(t, typeJSON, c.reader, c.writer, c.problem) })
	}
	if _, err := parseJSONSchema(`{"type":"nonsense"}`, nil); err == nil {
		t.Error("an invalid JSON Schema parsed")
	}
	addr := namedSchema{name: "address.json", schema: `{"type":"object","properties":{"city":{"type":"string"}}}`}
	if _, err := parseJSONSchema(`{"type":"object","properties":{"home":{"$ref":"address.json"}}}`, []namedSchema{addr}); err != nil {
		t.Errorf("a schema with a reference: %v", err)
	}
}

// TestProtobufCompatibility checks the wire-level rules.
func TestProtobufCompatibility(t *testing.T) {
	msg := func(fields string) string {
		return "syntax = \"proto3\";\npackage shop;\nmessage Customer {\n" + fields + "\n}\n"
	}
	cases := []struct {
		name, reader, writer, problem string
	}{
		{"same", msg(`string name = 1; int32 id = 2;`), msg(`string name = 1; int32 id = 2;`), ""},
		{"field added", msg(`string name = 1; int32 id = 2; string email = 3;`), msg(`string name = 1; int32 id = 2;`), ""},
		{"field removed", msg(`string name = 1;`), msg(`string name = 1; int32 id = 2;`), ""},
		{"field renamed", msg(`string full_name = 1; int32 id = 2;`), msg(`string name = 1; int32 id = 2;`), ""},
		{"int32 to int64", msg(`string name = 1; int64 id = 2;`), msg(`string name = 1; int32 id = 2;`), ""},
		{"int32 to string", msg(`string name = 1; string id = 2;`), msg(`string name = 1; int32 id = 2;`), "changed type"},
		{"sint32 to int32", msg(`string name = 1; int32 id = 2;`), msg(`string name = 1; sint32 id = 2;`), "changed type"},
		{"string to bytes", msg(`bytes name = 1;`), msg(`string name = 1;`), ""},
		{"scalar made repeated", msg(`repeated int32 id = 2;`), msg(`int32 id = 2;`), "repeated"},
		{"message removed", "syntax = \"proto3\";\npackage shop;\nmessage Other { string x = 1; }\n", msg(`string name = 1;`), "message shop.Customer removed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectProblem(t, typeProtobuf, c.reader, c.writer, c.problem) })
	}
	if _, err := parseProtobuf(`syntax = "proto3"; message M { strang x = 1; }`, nil); err == nil {
		t.Error("an invalid .proto parsed")
	}
	dep := namedSchema{name: "shop/address.proto", schema: "syntax = \"proto3\";\npackage shop;\nmessage Address { string city = 1; }\n"}
	if _, err := parseProtobuf("syntax = \"proto3\";\npackage shop;\nimport \"shop/address.proto\";\nimport \"google/protobuf/timestamp.proto\";\nmessage Customer { Address home = 1; google.protobuf.Timestamp at = 2; }\n", []namedSchema{dep}); err != nil {
		t.Errorf("a schema importing a reference and a well-known type: %v", err)
	}
}

// TestReferences registers a schema that uses another subject's version,
// and refuses to delete what is referenced.
func TestReferences(t *testing.T) {
	reg, _ := newMemRegistry(t)
	ctx := context.Background()
	addr, err := reg.Register(ctx, "address", &RegisterRequest{Schema: `{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"}]}`}, false)
	if err != nil {
		t.Fatal(err)
	}
	refs := []Reference{{Name: "shop.Address", Subject: "address", Version: addr.Version}}
	customer := `{"type":"record","name":"Customer","namespace":"shop","fields":[{"name":"home","type":"shop.Address"}]}`
	c, err := reg.Register(ctx, "customer", &RegisterRequest{Schema: customer, References: refs}, false)
	if err != nil {
		t.Fatalf("register with a reference: %v", err)
	}
	if _, err := reg.Register(ctx, "broken", &RegisterRequest{Schema: customer}, false); !isCode(err, codeInvalidSchema) {
		t.Errorf("register without the reference: %v, want 42201", err)
	}
	if _, err := reg.Register(ctx, "broken", &RegisterRequest{Schema: customer, References: []Reference{{Name: "shop.Address", Subject: "address", Version: 9}}}, false); !isCode(err, codeInvalidSchema) {
		t.Errorf("register with a missing reference: %v, want 42201", err)
	}
	got, err := reg.SchemaByID(ctx, c.ID)
	if err != nil || len(got.References) != 1 || got.References[0] != refs[0] {
		t.Errorf("SchemaByID = %+v, %v; want the reference", got, err)
	}
	if _, err := reg.DeleteVersion(ctx, "address", addr.Version, false); !isCode(err, codeReferenceExists) {
		t.Errorf("deleting a referenced version: %v, want 42206", err)
	}
	if _, err := reg.DeleteSubject(ctx, "customer", false); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.DeleteVersion(ctx, "address", addr.Version, false); err != nil {
		t.Errorf("deleting a version no live schema references: %v", err)
	}
}

// TestNormalizeAndImport: normalize=true stores and finds the canonical
// text; IMPORT mode keeps the ids it is given.
func TestNormalizeAndImport(t *testing.T) {
	reg, _ := newMemRegistry(t)
	ctx := context.Background()
	spaced := `{ "type" : "record", "name" : "R", "fields" : [ { "name" : "a", "type" : "int" } ] }`
	tight := `{"name":"R","type":"record","fields":[{"type":"int","name":"a"}]}`
	a, err := reg.Register(ctx, "n", &RegisterRequest{Schema: spaced}, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := reg.Register(ctx, "n", &RegisterRequest{Schema: tight}, true)
	if err != nil || b.ID != a.ID || b.Version != a.Version {
		t.Errorf("the same schema written differently, normalized: %+v, %v; want %+v", b, err, a)
	}
	if v, err := reg.Lookup(ctx, "n", &RegisterRequest{Schema: tight}, false, false); err != nil || v.ID != a.ID {
		t.Errorf("lookup of a normalized schema without normalize: %+v, %v", v, err)
	}

	if _, err := reg.SetSetting(ctx, modeSetting, "", modeImport, false); !isCode(err, codeOperationNotPermitted) {
		t.Errorf("IMPORT with subjects present and no force: %v, want 42205", err)
	}
	if _, err := reg.SetSetting(ctx, modeSetting, "imported", modeImport, false); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(ctx, "imported", &RegisterRequest{Schema: `"string"`}, false); !isCode(err, codeOperationNotPermitted) {
		t.Errorf("IMPORT without an id: %v, want 42205", err)
	}
	v, err := reg.Register(ctx, "imported", &RegisterRequest{Schema: `"string"`, ID: 100, Version: 7}, false)
	if err != nil || v.ID != 100 || v.Version != 7 {
		t.Errorf("IMPORT with id 100 version 7 = %+v, %v", v, err)
	}
	if _, err := reg.Register(ctx, "imported", &RegisterRequest{Schema: `"long"`, ID: 100}, false); !isCode(err, codeOperationNotPermitted) {
		t.Errorf("IMPORT of other content under a used id: %v, want 42205", err)
	}
	if _, err := reg.SetSetting(ctx, modeSetting, "imported", "", false); err != nil {
		t.Fatal(err)
	}
	next, err := reg.Register(ctx, "after", &RegisterRequest{Schema: `"bytes"`}, false)
	if err != nil || next.ID != 101 {
		t.Errorf("first id after an import of 100 = %+v, %v; want 101", next, err)
	}
}
