package console

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Formats the message browser shows keys and values in.
const (
	formatText = "text"
	formatJSON = "json"
	formatHex  = "hex"
	// formatSchema decodes through the Schema Registry (Options.Schemas).
	formatSchema = "schema"
)

// shown is a key, value or header value as the browser shows it.
type shown struct {
	Text string
	Null bool
	Note string // why it is not shown as asked (binary, not JSON)
	Size int
}

// show renders b in format: text when it is UTF-8 (else hex, with a
// note), JSON indented when it parses (else as text, with a note), or a
// hex dump.
func show(b []byte, isNull bool, format string) shown {
	if isNull {
		return shown{Null: true, Text: "null"}
	}
	s := shown{Size: len(b)}
	switch format {
	case formatHex:
		s.Text = hex.Dump(b)
		return s
	case formatJSON:
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") == nil {
			s.Text = out.String()
			return s
		}
		s.Note = "not JSON; shown as text"
	}
	if !utf8.Valid(b) {
		s.Text = hex.Dump(b)
		s.Note = "not UTF-8; shown as hex"
		return s
	}
	s.Text = string(b)
	return s
}

// showDecoded renders b decoded through the Schema Registry as indented
// JSON, noting the schema id; what is not in Confluent's wire format, or
// names a schema the registry cannot decode it with, is shown as text
// (or hex) with the reason.
func showDecoded(ctx context.Context, dec SchemaDecoder, b []byte, isNull bool) shown {
	if isNull {
		return shown{Null: true, Text: "null"}
	}
	if len(b) < 5 || b[0] != 0 {
		s := show(b, false, formatText)
		if s.Note == "" {
			s.Note = "not in the Schema Registry's wire format; shown as text"
		}
		return s
	}
	data, id, err := dec.Deserialize(ctx, b)
	if err != nil {
		s := show(b, false, formatHex)
		s.Note = fmt.Sprintf("cannot decode with schema id %d: %v; shown as hex", binary.BigEndian.Uint32(b[1:5]), err)
		return s
	}
	s := show(data, false, formatJSON)
	s.Size = len(b)
	s.Note = fmt.Sprintf("schema id %d", id)
	return s
}
