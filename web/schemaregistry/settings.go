package schemaregistry

import (
	"encoding/json"
	"slices"
)

// setting is one of the two per-subject settings with a global default:
// the compatibility level (/config) and the mode (/mode). Both are
// stored, read, set and deleted the same way; this says how they differ.
type setting struct {
	keyType string // the `_schemas` key type: CONFIG or MODE
	// field names the value in records and GET answers; putField in PUT
	// bodies and answers (Confluent's API names them differently).
	field, putField string
	valid           []string
	fallback        string // when neither the subject nor the global one is set
	invalid         *Error // an unknown value
	notSetCode      int    // GET of a subject that has none of its own
	what            string // in messages
}

var (
	compatibilitySetting = &setting{keyType: keyConfig, field: "compatibilityLevel", putField: "compatibility",
		valid: levels, fallback: defaultLevel, notSetCode: codeSubjectConfigNotFound, what: "compatibility",
		invalid: errorf(codeInvalidCompatibilityLevel, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive")}
	modeSetting = &setting{keyType: keyMode, field: "mode", putField: "mode",
		valid: modes, fallback: modeReadWrite, notSetCode: codeSubjectModeNotFound, what: "mode",
		invalid: errorf(codeInvalidMode, "Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE and IMPORT.")}
)

func (s *setting) isValid(v string) bool { return slices.Contains(s.valid, v) }

// record sets the subject's ("" global) value; "" deletes it (a
// tombstone).
func (s *setting) record(subject, value string) Record {
	r := Record{Key: subjectKey(s.keyType, subject)}
	if value != "" {
		r.Value = mustJSON(map[string]string{s.field: value})
	}
	return r
}

// applySetting folds a CONFIG or MODE record into the state.
func (st *state) applySetting(s *setting, subject string, value []byte) {
	values := st.settings[s.keyType]
	var v map[string]any
	if value == nil || json.Unmarshal(value, &v) != nil {
		delete(values, subject)
		return
	}
	if str, _ := v[s.field].(string); str != "" {
		values[subject] = str
	} else {
		delete(values, subject)
	}
}

// effective is the subject's own value, else the global one, else the
// default.
func (st *state) effective(s *setting, subject string) string {
	values := st.settings[s.keyType]
	if v, ok := values[subject]; ok {
		return v
	}
	if v, ok := values[""]; ok {
		return v
	}
	return s.fallback
}
