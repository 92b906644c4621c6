package schemaregistry

import (
	"context"
	"fmt"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// protoMainFile is the name the registered schema compiles under; its
// references are compiled under their own names (their import paths).
const protoMainFile = "__schema__.proto"

// protobufSchema is a compiled .proto file.
type protobufSchema struct {
	source string
	file   protoreflect.FileDescriptor
}

func parseProtobuf(schema string, refs []namedSchema) (parsedSchema, error) {
	sources := map[string]string{protoMainFile: schema}
	for _, r := range refs {
		sources[r.name] = r.schema
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(sources)}),
	}
	files, err := c.Compile(context.Background(), protoMainFile)
	if err != nil {
		return nil, err
	}
	return protobufSchema{source: schema, file: files[0]}, nil
}

// normalized is the source as given: samsa does not reprint .proto files
// (docs/schema-registry.md), so normalize leaves Protobuf schemas alone.
func (p protobufSchema) normalized() string { return p.source }

// readProblems applies the wire-level rules (docs/schema-registry.md):
// a message of the writer's must still exist; a field number present in
// both must keep a wire-compatible kind and cardinality. Fields added or
// removed are compatible (proto3 fields are optional; unknown fields are
// skipped), as are renames.
func (p protobufSchema) readProblems(writer parsedSchema) []string {
	w, ok := writer.(protobufSchema)
	if !ok {
		return []string{"the writer's schema is not Protobuf"}
	}
	var problems []string
	walkMessages(w.file.Messages(), func(wm protoreflect.MessageDescriptor) {
		rm := findMessage(p.file, wm.FullName())
		if rm == nil {
			problems = append(problems, fmt.Sprintf("message %s removed", wm.FullName()))
			return
		}
		wf := wm.Fields()
		for i := range wf.Len() {
			f := wf.Get(i)
			rf := rm.Fields().ByNumber(f.Number())
			if rf == nil {
				continue
			}
			if f.Cardinality() == protoreflect.Repeated != (rf.Cardinality() == protoreflect.Repeated) && !lengthDelimited(f.Kind()) {
				problems = append(problems, fmt.Sprintf("field %s (number %d) changed between repeated and singular", rf.FullName(), f.Number()))
			}
			if !kindsCompatible(rf, f) {
				problems = append(problems, fmt.Sprintf("field %s (number %d) changed type from %s to %s", rf.FullName(), f.Number(), describeField(f), describeField(rf)))
			}
		}
	})
	return problems
}

func walkMessages(ms protoreflect.MessageDescriptors, fn func(protoreflect.MessageDescriptor)) {
	for i := range ms.Len() {
		m := ms.Get(i)
		if m.IsMapEntry() {
			continue
		}
		fn(m)
		walkMessages(m.Messages(), fn)
	}
}

func findMessage(f protoreflect.FileDescriptor, name protoreflect.FullName) protoreflect.MessageDescriptor {
	var found protoreflect.MessageDescriptor
	walkMessages(f.Messages(), func(m protoreflect.MessageDescriptor) {
		if m.FullName() == name {
			found = m
		}
	})
	return found
}

func lengthDelimited(k protoreflect.Kind) bool {
	return k == protoreflect.StringKind || k == protoreflect.BytesKind || k == protoreflect.MessageKind
}

// wireGroup names the kinds whose encodings read as one another.
func wireGroup(k protoreflect.Kind) string {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Uint64Kind, protoreflect.BoolKind, protoreflect.EnumKind:
		return "varint"
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return "zigzag"
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return "fixed32"
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return "fixed64"
	case protoreflect.StringKind, protoreflect.BytesKind:
		return "bytes"
	}
	return k.String()
}

func kindsCompatible(reader, writer protoreflect.FieldDescriptor) bool {
	if wireGroup(reader.Kind()) != wireGroup(writer.Kind()) {
		return false
	}
	if reader.Kind() == protoreflect.MessageKind || reader.Kind() == protoreflect.GroupKind {
		return reader.Message().FullName() == writer.Message().FullName()
	}
	return true
}

func describeField(f protoreflect.FieldDescriptor) string {
	if f.Message() != nil {
		return string(f.Message().FullName())
	}
	return f.Kind().String()
}
