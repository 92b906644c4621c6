package schemaregistry

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	// The well-known types, registered in protoregistry.GlobalFiles for
	// serialized descriptors that import them.
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)

// protoMainFile is the name the registered schema compiles under; its
// references are compiled under their own names (their import paths).
const protoMainFile = "__schema__.proto"

// protobufSchema is a compiled .proto file.
type protobufSchema struct {
	source string
	file   protoreflect.FileDescriptor
}

// parseProtobuf compiles a .proto source, or reads a base64-encoded
// FileDescriptorProto, the form confluent-kafka-python's serializer
// registers.
func parseProtobuf(schema string, refs []namedSchema) (parsedSchema, error) {
	if fdp, ok := serializedDescriptor(schema); ok {
		return buildDescriptor(schema, fdp, refs)
	}
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

// serializedDescriptor decodes base64 FileDescriptorProto bytes.
func serializedDescriptor(schema string) (*descriptorpb.FileDescriptorProto, bool) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(schema))
	if err != nil || len(b) == 0 {
		return nil, false
	}
	var fdp descriptorpb.FileDescriptorProto
	if proto.Unmarshal(b, &fdp) != nil || fdp.GetName() == "" {
		return nil, false
	}
	return &fdp, true
}

// buildDescriptor links a FileDescriptorProto against its references
// (each a source or a serialized descriptor, dependencies first) and the
// well-known types.
func buildDescriptor(schema string, fdp *descriptorpb.FileDescriptorProto, refs []namedSchema) (parsedSchema, error) {
	files := new(protoregistry.Files)
	resolver := chainResolver{files, protoregistry.GlobalFiles}
	for _, r := range refs {
		var f protoreflect.FileDescriptor
		if rfdp, ok := serializedDescriptor(r.schema); ok {
			built, err := protodesc.NewFile(rfdp, resolver)
			if err != nil {
				return nil, fmt.Errorf("reference %s: %w", r.name, err)
			}
			f = built
		} else {
			c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
				Accessor: protocompile.SourceAccessorFromMap(map[string]string{r.name: r.schema})})}
			compiled, err := c.Compile(context.Background(), r.name)
			if err != nil {
				return nil, fmt.Errorf("reference %s: %w", r.name, err)
			}
			f = compiled[0]
		}
		if err := files.RegisterFile(f); err != nil {
			return nil, fmt.Errorf("reference %s: %w", r.name, err)
		}
	}
	f, err := protodesc.NewFile(fdp, resolver)
	if err != nil {
		return nil, err
	}
	return protobufSchema{source: schema, file: f}, nil
}

// chainResolver finds a file in the first registry that has it.
type chainResolver []*protoregistry.Files

func (c chainResolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	for _, files := range c {
		if f, err := files.FindFileByPath(path); err == nil {
			return f, nil
		}
	}
	return nil, protoregistry.NotFound
}

func (c chainResolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	for _, files := range c {
		if d, err := files.FindDescriptorByName(name); err == nil {
			return d, nil
		}
	}
	return nil, protoregistry.NotFound
}

// serialized is the file as a base64 FileDescriptorProto: what
// ?format=serialized answers, for clients that build descriptors from it.
func (p protobufSchema) serialized() string {
	b, err := proto.Marshal(protodesc.ToFileDescriptorProto(p.file))
	if err != nil {
		return p.source
	}
	return base64.StdEncoding.EncodeToString(b)
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
