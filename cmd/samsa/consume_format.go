package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordFormatter renders one consumed record.
type recordFormatter interface {
	format(dst []byte, r *kgo.Record) []byte
}

// newFormatter picks the output: -J's JSON envelope, a -f template, or
// kcat's default (the value, or key<delim>value with -K).
func newFormatter(template string, jsonOut bool, keyDelim string) (recordFormatter, error) {
	switch {
	case jsonOut && template != "":
		return nil, fmt.Errorf("-J and -f: choose one")
	case jsonOut:
		return jsonFormatter{}, nil
	case template == "" && keyDelim != "":
		template = "%k" + strings.ReplaceAll(keyDelim, "%", "%%") + `%s\n`
	case template == "":
		template = `%s\n`
	}
	return parseTemplate(unescape(template))
}

// templateFormatter is a kcat -f template: literal text and %-tokens.
type templateFormatter []templatePart

type templatePart struct {
	literal string
	token   byte // 0 for a literal
}

// templateTokens are kcat's: topic, partition, offset, key, key length,
// value, value length, timestamp (ms), headers.
const templateTokens = "tpokKsSTh"

func parseTemplate(t string) (templateFormatter, error) {
	var out templateFormatter
	var lit strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '%' {
			lit.WriteByte(c)
			continue
		}
		if i+1 == len(t) {
			return nil, fmt.Errorf("-f %q: a lone %% at the end", t)
		}
		i++
		switch tok := t[i]; {
		case tok == '%':
			lit.WriteByte('%')
		case strings.IndexByte(templateTokens, tok) >= 0:
			if lit.Len() > 0 {
				out = append(out, templatePart{literal: lit.String()})
				lit.Reset()
			}
			out = append(out, templatePart{token: tok})
		default:
			return nil, fmt.Errorf("-f: unknown token %%%c (known: %%t %%p %%o %%k %%K %%s %%S %%T %%h %%%%)", tok)
		}
	}
	if lit.Len() > 0 {
		out = append(out, templatePart{literal: lit.String()})
	}
	return out, nil
}

func (f templateFormatter) format(dst []byte, r *kgo.Record) []byte {
	for _, p := range f {
		switch p.token {
		case 0:
			dst = append(dst, p.literal...)
		case 't':
			dst = append(dst, r.Topic...)
		case 'p':
			dst = strconv.AppendInt(dst, int64(r.Partition), 10)
		case 'o':
			dst = strconv.AppendInt(dst, r.Offset, 10)
		case 'k':
			dst = append(dst, r.Key...)
		case 'K':
			dst = strconv.AppendInt(dst, lengthOrNull(r.Key), 10)
		case 's':
			dst = append(dst, r.Value...)
		case 'S':
			dst = strconv.AppendInt(dst, lengthOrNull(r.Value), 10)
		case 'T':
			dst = strconv.AppendInt(dst, r.Timestamp.UnixMilli(), 10)
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, h.Key...)
				dst = append(dst, '=')
				dst = append(dst, h.Value...)
			}
		}
	}
	return dst
}

// lengthOrNull is kcat's %K/%S: the length, -1 for null.
func lengthOrNull(b []byte) int64 {
	if b == nil {
		return -1
	}
	return int64(len(b))
}

// jsonFormatter is kcat's -J envelope, one object a line.
type jsonFormatter struct{}

func (jsonFormatter) format(dst []byte, r *kgo.Record) []byte {
	tsType := "create"
	if r.Attrs.TimestampType() == 1 {
		tsType = "logappend"
	}
	dst = append(dst, `{"topic":`...)
	dst = appendJSONString(dst, []byte(r.Topic))
	dst = append(dst, `,"partition":`...)
	dst = strconv.AppendInt(dst, int64(r.Partition), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, r.Offset, 10)
	dst = append(dst, `,"tstype":"`+tsType+`","ts":`...)
	dst = strconv.AppendInt(dst, r.Timestamp.UnixMilli(), 10)
	dst = append(dst, `,"headers":[`...)
	for i, h := range r.Headers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, []byte(h.Key))
		dst = append(dst, ',')
		dst = appendJSONString(dst, h.Value)
	}
	dst = append(dst, `],"key":`...)
	dst = appendJSONString(dst, r.Key)
	dst = append(dst, `,"payload":`...)
	dst = appendJSONString(dst, r.Value)
	return append(dst, "}\n"...)
}

// appendJSONString appends b as a JSON string (invalid UTF-8 replaced, as
// encoding/json does), or null for nil.
func appendJSONString(dst, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	q, _ := json.Marshal(string(b)) // a string always marshals
	return append(dst, q...)
}
