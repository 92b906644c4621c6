package schemaregistry

import "fmt"

// The schema types Confluent's clients name in "schemaType".
const (
	typeAvro     = "AVRO"
	typeJSON     = "JSON"
	typeProtobuf = "PROTOBUF"
)

// schemaTypes is GET /schemas/types.
var schemaTypes = []string{typeJSON, typeProtobuf, typeAvro}

// namedSchema is a referenced schema's text under the name its user
// refers to it by.
type namedSchema struct {
	name   string
	schema string
}

// parsedSchema is a schema its type's library accepted.
type parsedSchema interface {
	// normalized is the schema in a canonical text (for normalize=true):
	// the same schema written differently normalizes to the same text.
	normalized() string
	// readProblems lists why data written with writer could not be read
	// with this schema (nil: it can); writer is of the same type.
	readProblems(writer parsedSchema) []string
}

// parseSchema parses schema of schemaType ("" is Avro) with its
// references, given dependencies first.
func parseSchema(schemaType, schema string, refs []namedSchema) (parsedSchema, error) {
	switch schemaType {
	case "", typeAvro:
		return parseAvro(schema, refs)
	case typeJSON:
		return parseJSONSchema(schema, refs)
	case typeProtobuf:
		return parseProtobuf(schema, refs)
	}
	return nil, fmt.Errorf("unknown schema type %q (want one of %v)", schemaType, schemaTypes)
}
