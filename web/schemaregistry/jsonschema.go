package schemaregistry

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonBase is where schemas without an absolute $id live for the
// compiler; a reference named "customer.json" resolves beside them.
const jsonBase = "mem://schemas/"

// jsonSchema is a parsed JSON Schema: the compiled schema proves it is
// valid, the document is what compatibility compares.
type jsonSchema struct {
	doc      any
	compiled *jsonschema.Schema
}

func jsonResourceURL(name string) string {
	if u, err := url.Parse(name); err == nil && u.Scheme != "" {
		return name
	}
	return jsonBase + strings.TrimPrefix(name, "/")
}

func parseJSONSchema(schema string, refs []namedSchema) (parsedSchema, error) {
	c := jsonschema.NewCompiler()
	for _, r := range refs {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.schema))
		if err != nil {
			return nil, fmt.Errorf("reference %s: %w", r.name, err)
		}
		if err := c.AddResource(jsonResourceURL(r.name), doc); err != nil {
			return nil, fmt.Errorf("reference %s: %w", r.name, err)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, err
	}
	root := jsonBase + "root.json"
	if err := c.AddResource(root, doc); err != nil {
		return nil, err
	}
	compiled, err := c.Compile(root)
	if err != nil {
		return nil, err
	}
	return jsonSchema{doc: doc, compiled: compiled}, nil
}

// normalized is the document with object keys sorted and no whitespace
// (encoding/json sorts map keys).
func (j jsonSchema) normalized() string {
	b, err := json.Marshal(j.doc)
	if err != nil {
		return fmt.Sprint(j.doc)
	}
	return string(b)
}

// readProblems compares the documents structurally. The rules, a subset
// of Confluent's (docs/schema-registry.md): every instance the writer
// allowed must still be allowed by the reader, judged keyword by keyword
// (type, enum, const, required, properties and additionalProperties,
// items, the length and range bounds); $ref targets are compared by
// their reference, not followed.
func (j jsonSchema) readProblems(writer parsedSchema) []string {
	w, ok := writer.(jsonSchema)
	if !ok {
		return []string{"the writer's schema is not a JSON Schema"}
	}
	var c jsonResolver
	c.check(j.doc, w.doc, "#")
	return c.problems
}

type jsonResolver struct{ problems []string }

func (c *jsonResolver) fail(path, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf("%s at '%s'", fmt.Sprintf(format, args...), path))
}

// asObject reads a schema document: true and {} allow everything, false
// allows nothing.
func asObject(s any) (obj map[string]any, allowsNothing bool) {
	switch v := s.(type) {
	case map[string]any:
		return v, false
	case bool:
		return map[string]any{}, !v
	}
	return map[string]any{}, false
}

func (c *jsonResolver) check(reader, writer any, path string) {
	r, rNothing := asObject(reader)
	w, wNothing := asObject(writer)
	if wNothing {
		return
	}
	if rNothing {
		c.fail(path, "reader allows nothing")
		return
	}
	if rr, ok := r["$ref"].(string); ok {
		if wr, _ := w["$ref"].(string); wr != rr {
			c.fail(path, "reference changed to %s", rr)
		}
		return
	}
	c.checkTypes(r, w, path)
	c.checkEnum(r, w, path)
	c.checkBounds(r, w, path)
	c.checkObject(r, w, path)
	if ri, ok := r["items"]; ok {
		if wi, ok := w["items"]; ok {
			c.check(ri, wi, path+"/items")
		} else if o, nothing := asObject(ri); nothing || len(o) > 0 {
			c.fail(path+"/items", "items constrained")
		}
	}
}

func jsonTypes(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func (c *jsonResolver) checkTypes(r, w map[string]any, path string) {
	rt := jsonTypes(r)
	if rt == nil {
		return
	}
	wt := jsonTypes(w)
	if wt == nil {
		c.fail(path, "type narrowed to %v", rt)
		return
	}
	for _, t := range wt {
		if !slices.Contains(rt, t) && (t != "integer" || !slices.Contains(rt, "number")) {
			c.fail(path, "type %s no longer allowed (reader %v)", t, rt)
		}
	}
}

func (c *jsonResolver) checkEnum(r, w map[string]any, path string) {
	re, ok := r["enum"].([]any)
	if !ok {
		return
	}
	we, ok := w["enum"].([]any)
	if !ok {
		c.fail(path, "enum added")
		return
	}
	for _, v := range we {
		if !slices.ContainsFunc(re, func(x any) bool { return jsonEqual(x, v) }) {
			c.fail(path, "enum value %v removed", v)
		}
	}
}

func jsonEqual(a, b any) bool { return string(mustJSON(a)) == string(mustJSON(b)) }

// jsonNumber reads a number of a document (the compiler's decoder keeps
// numbers as json.Number).
func jsonNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// checkBounds: a lower bound may not rise, an upper bound may not fall
// (nor appear).
func (c *jsonResolver) checkBounds(r, w map[string]any, path string) {
	for _, k := range []string{"minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties"} {
		if rv, ok := jsonNumber(r[k]); ok {
			if wv, ok := jsonNumber(w[k]); !ok || rv > wv {
				c.fail(path, "%s raised to %v", k, rv)
			}
		}
	}
	for _, k := range []string{"maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties"} {
		if rv, ok := jsonNumber(r[k]); ok {
			wv, ok := jsonNumber(w[k])
			if !ok {
				wv = math.Inf(1)
			}
			if rv < wv {
				c.fail(path, "%s lowered to %v", k, rv)
			}
		}
	}
}

func (c *jsonResolver) checkObject(r, w map[string]any, path string) {
	rp, _ := r["properties"].(map[string]any)
	wp, _ := w["properties"].(map[string]any)
	rClosed := r["additionalProperties"] == false
	wClosed := w["additionalProperties"] == false
	for name, ws := range wp {
		if rs, ok := rp[name]; ok {
			c.check(rs, ws, path+"/properties/"+name)
		} else if rClosed {
			c.fail(path+"/properties/"+name, "property removed from a closed content model")
		}
	}
	for name, rs := range rp {
		if _, ok := wp[name]; ok || wClosed {
			continue
		}
		// The writer was open: its data may hold this property with any
		// value, which the reader now constrains.
		if o, nothing := asObject(rs); nothing || len(o) > 0 {
			c.fail(path+"/properties/"+name, "property added to an open content model")
		}
	}
	if rClosed && !wClosed {
		c.fail(path, "additionalProperties closed")
	}
	wreq, _ := w["required"].([]any)
	rreq, _ := r["required"].([]any)
	for _, name := range rreq {
		if !slices.Contains(wreq, name) {
			c.fail(path+"/required", "required property %v added", name)
		}
	}
}
