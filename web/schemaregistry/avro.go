package schemaregistry

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hamba/avro/v2"
)

// avroSchema is a parsed Avro schema.
type avroSchema struct {
	schema avro.Schema
}

// parseAvro parses schema after its references, each into one fresh
// cache: named types must not leak between requests (hamba's default
// cache is global) and a reference's types must be known by name.
func parseAvro(schema string, refs []namedSchema) (parsedSchema, error) {
	cache := &avro.SchemaCache{}
	for _, r := range refs {
		if _, err := avro.ParseWithCache(r.schema, "", cache); err != nil {
			return nil, fmt.Errorf("reference %s: %w", r.name, err)
		}
	}
	s, err := avro.ParseWithCache(schema, "", cache)
	if err != nil {
		return nil, err
	}
	return avroSchema{schema: s}, nil
}

// normalized is the schema as hamba writes it back: whitespace,
// attribute order and short forms ("string" for {"type":"string"}) made
// uniform, defaults, docs and aliases kept (they matter to resolution).
func (a avroSchema) normalized() string {
	b, err := json.Marshal(a.schema)
	if err != nil {
		return a.schema.String()
	}
	return string(b)
}

func (a avroSchema) readProblems(writer parsedSchema) []string {
	w, ok := writer.(avroSchema)
	if !ok {
		return []string{"the writer's schema is not Avro"}
	}
	c := avroResolver{seen: map[[2]string]bool{}}
	c.check(a.schema, w.schema, "/")
	return c.problems
}

// avroResolver applies the Avro specification's schema resolution rules
// (reader's schema against writer's schema), collecting every problem
// with the path where it is.
type avroResolver struct {
	problems []string
	// seen stops the recursion of recursive named types: a pair of
	// record names being checked is assumed to resolve.
	seen map[[2]string]bool
}

func (c *avroResolver) fail(path, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf("%s at '%s'", fmt.Sprintf(format, args...), path))
}

func deref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

// promotions are the writer types a reader's primitive type also reads.
var promotions = map[avro.Type][]avro.Type{
	avro.Long:   {avro.Int},
	avro.Float:  {avro.Int, avro.Long},
	avro.Double: {avro.Int, avro.Long, avro.Float},
	avro.String: {avro.Bytes},
	avro.Bytes:  {avro.String},
}

// check adds the problems of reading writer's data with reader.
func (c *avroResolver) check(reader, writer avro.Schema, path string) {
	reader, writer = deref(reader), deref(writer)
	// A writer's union is readable when each of its branches is: the
	// datum may be any of them.
	if wu, ok := writer.(*avro.UnionSchema); ok {
		for _, b := range wu.Types() {
			c.check(reader, b, path)
		}
		return
	}
	if ru, ok := reader.(*avro.UnionSchema); ok {
		for _, b := range ru.Types() {
			if c.readable(b, writer) {
				return
			}
		}
		c.fail(path, "reader union lacks type %s", describeAvro(writer))
		return
	}
	if reader.Type() != writer.Type() {
		if slices.Contains(promotions[reader.Type()], writer.Type()) {
			return
		}
		c.fail(path, "type mismatch: reader %s, writer %s", describeAvro(reader), describeAvro(writer))
		return
	}
	switch r := reader.(type) {
	case *avro.RecordSchema:
		c.checkRecord(r, writer.(*avro.RecordSchema), path)
	case *avro.EnumSchema:
		w := writer.(*avro.EnumSchema)
		if !namesMatch(r.FullName(), r.Aliases(), w.FullName()) {
			c.fail(path, "name mismatch: reader %s, writer %s", r.FullName(), w.FullName())
			return
		}
		if r.HasDefault() {
			return
		}
		for _, sym := range w.Symbols() {
			if !slices.Contains(r.Symbols(), sym) {
				c.fail(path+"symbols", "reader enum %s lacks symbol %s and has no default", r.FullName(), sym)
			}
		}
	case *avro.FixedSchema:
		w := writer.(*avro.FixedSchema)
		if !namesMatch(r.FullName(), r.Aliases(), w.FullName()) {
			c.fail(path, "name mismatch: reader %s, writer %s", r.FullName(), w.FullName())
		} else if r.Size() != w.Size() {
			c.fail(path+"size", "fixed size mismatch: reader %d, writer %d", r.Size(), w.Size())
		}
	case *avro.ArraySchema:
		c.check(r.Items(), writer.(*avro.ArraySchema).Items(), path+"items/")
	case *avro.MapSchema:
		c.check(r.Values(), writer.(*avro.MapSchema).Values(), path+"values/")
	}
}

// readable reports whether reader reads all of writer, without recording
// problems (a union branch that does not fit is not a problem if another
// does).
func (c *avroResolver) readable(reader, writer avro.Schema) bool {
	sub := avroResolver{seen: c.seen}
	sub.check(reader, writer, "")
	return len(sub.problems) == 0
}

func (c *avroResolver) checkRecord(r, w *avro.RecordSchema, path string) {
	if !namesMatch(r.FullName(), r.Aliases(), w.FullName()) {
		c.fail(path, "name mismatch: reader %s, writer %s", r.FullName(), w.FullName())
		return
	}
	pair := [2]string{r.FullName(), w.FullName()}
	if c.seen[pair] {
		return
	}
	c.seen[pair] = true
	defer delete(c.seen, pair)
	for _, rf := range r.Fields() {
		fpath := path + "fields/" + rf.Name() + "/"
		wf := writerField(w, rf)
		if wf == nil {
			if !rf.HasDefault() {
				c.fail(fpath, "reader field %s has no default value and is missing from the writer", rf.Name())
			}
			continue
		}
		c.check(rf.Type(), wf.Type(), fpath)
	}
}

// writerField is the writer's field that the reader's field reads: the
// same name or one of the reader field's aliases.
func writerField(w *avro.RecordSchema, rf *avro.Field) *avro.Field {
	for _, wf := range w.Fields() {
		if wf.Name() == rf.Name() {
			return wf
		}
	}
	for _, wf := range w.Fields() {
		if slices.Contains(rf.Aliases(), wf.Name()) {
			return wf
		}
	}
	return nil
}

// namesMatch: a named reader type reads a writer type of its full name,
// of one of its aliases, or of the same unqualified name (Avro's own
// checker compares unqualified names).
func namesMatch(reader string, aliases []string, writer string) bool {
	return reader == writer || slices.Contains(aliases, writer) || unqualified(reader) == unqualified(writer)
}

func unqualified(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '.' {
			return name[i+1:]
		}
	}
	return name
}

func describeAvro(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return string(s.Type()) + " " + n.FullName()
	}
	return string(s.Type())
}
