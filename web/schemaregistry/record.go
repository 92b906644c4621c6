package schemaregistry

import (
	"encoding/json"
	"fmt"
)

// The key types of Confluent's `_schemas` records. A record's key says
// what it is about (a subject's version, a config, a mode); its value is
// the new state, or null (a tombstone) to remove it, so compaction keeps
// exactly the current registry.
const (
	keySchema        = "SCHEMA"
	keyConfig        = "CONFIG"
	keyMode          = "MODE"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyClearSubject  = "CLEAR_SUBJECT"
	keyNoop          = "NOOP"
)

// recordKey is a `_schemas` key in Confluent's JSON: SCHEMA keys carry
// magic 1 and the version, the others magic 0; CONFIG and MODE keys have
// a null subject for the global setting. The field order is Confluent's,
// so the same thing gets byte-identical keys and compaction folds them.
type recordKey struct {
	KeyType string  `json:"keytype"`
	Subject *string `json:"subject"`
	Version *int    `json:"version,omitempty"`
	Magic   int     `json:"magic"`
}

// Reference is a schema's use of another subject's version under a name
// (an Avro full name, a JSON Schema $ref URL, a Protobuf import path).
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// schemaValue is the value of a SCHEMA record: one version of a subject
// and whether it is soft-deleted. schemaType is left out for Avro, as
// Confluent does.
type schemaValue struct {
	Version
	Deleted bool `json:"deleted"`
}

// deleteSubjectValue soft-deletes every version of Subject up to Version.
type deleteSubjectValue struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// clearSubjectValue (written by Confluent's registry) forgets the soft-deleted versions of Subject.
type clearSubjectValue struct {
	Subject string `json:"subject"`
}

// Record is one `_schemas` record; a nil Value is a tombstone.
type Record struct {
	Key, Value []byte
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("schemaregistry: marshalling %T: %v", v, err)) // plain structs of strings and ints
	}
	return b
}

func schemaRecord(v Version, deleted bool) Record {
	version := v.Version
	if v.SchemaType == typeAvro {
		v.SchemaType = ""
	}
	return Record{
		Key:   mustJSON(recordKey{KeyType: keySchema, Subject: &v.Subject, Version: &version, Magic: 1}),
		Value: mustJSON(schemaValue{Version: v, Deleted: deleted}),
	}
}

func schemaTombstone(subject string, version int) Record {
	return Record{Key: mustJSON(recordKey{KeyType: keySchema, Subject: &subject, Version: &version, Magic: 1})}
}

// subjectKey is the key of a per-subject (or, for "", global) record.
func subjectKey(keyType, subject string) []byte {
	k := recordKey{KeyType: keyType}
	if subject != "" {
		k.Subject = &subject
	}
	return mustJSON(k)
}

func deleteSubjectRecord(subject string, upTo int) Record {
	return Record{Key: subjectKey(keyDeleteSubject, subject), Value: mustJSON(deleteSubjectValue{Subject: subject, Version: upTo})}
}

func noopRecord() Record { return Record{Key: mustJSON(recordKey{KeyType: keyNoop})} }
