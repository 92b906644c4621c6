package console

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"unicode/utf8"
)

// Formats the message browser shows keys and values in.
const (
	formatText = "text"
	formatJSON = "json"
	formatHex  = "hex"
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
