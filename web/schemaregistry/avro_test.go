package schemaregistry

import (
	"strings"
	"testing"
)

func mustAvro(t *testing.T, s string) parsedSchema {
	t.Helper()
	p, err := parseAvro(s, nil)
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return p
}

func record(fields string) string {
	return `{"type":"record","name":"Customer","namespace":"shop","fields":[` + fields + `]}`
}

// TestAvroResolution walks the specification's schema-resolution rules:
// each case says whether data written with writer reads with reader and,
// when not, a word the problem must name.
func TestAvroResolution(t *testing.T) {
	cases := []struct {
		name, reader, writer string
		problem              string // "" = readable
	}{
		{"same primitive", `"int"`, `"int"`, ""},
		{"int promotes to long", `"long"`, `"int"`, ""},
		{"int promotes to float", `"float"`, `"int"`, ""},
		{"long promotes to double", `"double"`, `"long"`, ""},
		{"float promotes to double", `"double"`, `"float"`, ""},
		{"string reads bytes", `"string"`, `"bytes"`, ""},
		{"bytes reads string", `"bytes"`, `"string"`, ""},
		{"long does not narrow to int", `"int"`, `"long"`, "type mismatch"},
		{"double does not narrow to float", `"float"`, `"double"`, "type mismatch"},
		{"string is not int", `"int"`, `"string"`, "type mismatch"},
		{"field added with default", record(`{"name":"a","type":"string"},{"name":"b","type":"int","default":0}`), record(`{"name":"a","type":"string"}`), ""},
		{"field added without default", record(`{"name":"a","type":"string"},{"name":"b","type":"int"}`), record(`{"name":"a","type":"string"}`), "no default"},
		{"field removed", record(`{"name":"a","type":"string"}`), record(`{"name":"a","type":"string"},{"name":"b","type":"int"}`), ""},
		{"field type promoted", record(`{"name":"a","type":"long"}`), record(`{"name":"a","type":"int"}`), ""},
		{"field type narrowed", record(`{"name":"a","type":"int"}`), record(`{"name":"a","type":"long"}`), "fields/a"},
		{"field renamed with alias", record(`{"name":"b","aliases":["a"],"type":"int"}`), record(`{"name":"a","type":"int"}`), ""},
		{"field renamed without alias", record(`{"name":"b","type":"int"}`), record(`{"name":"a","type":"int"}`), "no default"},
		{"record renamed", `{"type":"record","name":"Other","fields":[]}`, `{"type":"record","name":"Customer","fields":[]}`, "name mismatch"},
		{"record renamed with alias", `{"type":"record","name":"Other","aliases":["Customer"],"fields":[]}`, `{"type":"record","name":"Customer","fields":[]}`, ""},
		{"enum symbol added", `{"type":"enum","name":"E","symbols":["A","B","C"]}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, ""},
		{"enum symbol removed", `{"type":"enum","name":"E","symbols":["A"]}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, "lacks symbol B"},
		{"enum symbol removed with default", `{"type":"enum","name":"E","symbols":["A","U"],"default":"U"}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, ""},
		{"fixed same size", `{"type":"fixed","name":"F","size":4}`, `{"type":"fixed","name":"F","size":4}`, ""},
		{"fixed size changed", `{"type":"fixed","name":"F","size":8}`, `{"type":"fixed","name":"F","size":4}`, "size mismatch"},
		{"array items promoted", `{"type":"array","items":"long"}`, `{"type":"array","items":"int"}`, ""},
		{"array items narrowed", `{"type":"array","items":"int"}`, `{"type":"array","items":"long"}`, "items"},
		{"map values narrowed", `{"type":"map","values":"int"}`, `{"type":"map","values":"string"}`, "values"},
		{"writer type into reader union", `["null","string"]`, `"string"`, ""},
		{"writer type missing from reader union", `["null","string"]`, `"int"`, "reader union lacks"},
		{"writer union into reader union", `["null","string","int"]`, `["null","string"]`, ""},
		{"writer union branch unreadable", `["null","string"]`, `["null","string","int"]`, "reader union lacks"},
		{"writer union into non-union", `"string"`, `["null","string"]`, "type mismatch"},
		{"promotion inside a union", `["null","long"]`, `"int"`, ""},
		{"recursive record", `{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]},{"name":"v","type":"long"}]}`,
			`{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]},{"name":"v","type":"int"}]}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problems := mustAvro(t, c.reader).readProblems(mustAvro(t, c.writer))
			switch {
			case c.problem == "" && len(problems) > 0:
				t.Errorf("reader %s cannot read writer %s: %v", c.reader, c.writer, problems)
			case c.problem != "" && !strings.Contains(strings.Join(problems, "; "), c.problem):
				t.Errorf("reader %s reading writer %s: problems %v, want one about %q", c.reader, c.writer, problems, c.problem)
			}
		})
	}
}

// TestCompatibilityLevels checks which direction each level tests and
// how far back the transitive ones look.
func TestCompatibilityLevels(t *testing.T) {
	v1 := mustAvro(t, record(`{"name":"a","type":"string"}`))
	// v2 adds b with a default: readable both ways.
	v2 := mustAvro(t, record(`{"name":"a","type":"string"},{"name":"b","type":"int","default":0}`))
	// v3 drops the default of b: reads v2's data (BACKWARD against v2) but
	// not v1's.
	v3 := mustAvro(t, record(`{"name":"a","type":"string"},{"name":"b","type":"int"}`))
	// addRequired adds c without default: not BACKWARD; FORWARD holds
	// (old readers ignore c).
	addRequired := mustAvro(t, record(`{"name":"a","type":"string"},{"name":"b","type":"int","default":0},{"name":"c","type":"int"}`))
	// dropA removes a, which v1 and v2 need without default: FORWARD fails.
	dropA := mustAvro(t, record(`{"name":"b","type":"int","default":0}`))
	cases := []struct {
		level      string
		candidate  parsedSchema
		previous   []parsedSchema
		compatible bool
	}{
		{levelBackward, v3, []parsedSchema{v1, v2}, true},
		{levelBackwardTransitive, v3, []parsedSchema{v1, v2}, false},
		{levelBackward, addRequired, []parsedSchema{v1, v2}, false},
		{levelForward, addRequired, []parsedSchema{v1, v2}, true},
		{levelForward, dropA, []parsedSchema{v1, v2}, false},
		{levelBackward, dropA, []parsedSchema{v1, v2}, true},
		{levelFull, addRequired, []parsedSchema{v1, v2}, false},
		{levelFull, dropA, []parsedSchema{v1, v2}, false},
		{levelFull, v2, []parsedSchema{v1}, true},
		{levelFullTransitive, v3, []parsedSchema{v1, v2}, false},
		{levelForwardTransitive, addRequired, []parsedSchema{v1, v2}, true},
		{levelNone, dropA, []parsedSchema{v1, v2}, true},
		{levelBackward, dropA, nil, true},
	}
	for _, c := range cases {
		problems := compatibilityProblems(c.level, c.candidate, c.previous)
		if (len(problems) == 0) != c.compatible {
			t.Errorf("%s: compatible=%v, want %v (problems %v)", c.level, len(problems) == 0, c.compatible, problems)
		}
	}
}

func TestAvroReferencesAndNormalize(t *testing.T) {
	addr := namedSchema{name: "shop.Address", schema: `{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"}]}`}
	p, err := parseAvro(record(`{"name":"home","type":"shop.Address"}`), []namedSchema{addr})
	if err != nil {
		t.Fatalf("schema using a reference: %v", err)
	}
	if _, err := parseAvro(record(`{"name":"home","type":"shop.Address"}`), nil); err == nil {
		t.Error("a schema naming an unknown type parsed")
	}
	a := mustAvro(t, `{"type" : "record", "name":"R", "fields" : [ {"name":"x", "type":{"type":"string"}} ]}`)
	b := mustAvro(t, `{"name":"R","type":"record","fields":[{"type":"string","name":"x"}]}`)
	if a.normalized() != b.normalized() {
		t.Errorf("the same schema normalizes differently: %s vs %s", a.normalized(), b.normalized())
	}
	if !strings.Contains(p.normalized(), "shop.Address") {
		t.Errorf("normalized form %s lost the reference", p.normalized())
	}
}
