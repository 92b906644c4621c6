package schemaregistry

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hamba/avro/v2"
)

// Avro's binary encoding from and to JSON values in Avro's JSON encoding
// (unions as {"branch": value} except null, bytes and fixed as strings of
// code points 0-255), for the REST proxy's AVRO records. JSON values come
// decoded with UseNumber, so longs keep their precision.

func avroEncodeJSON(s avro.Schema, v any) ([]byte, error) {
	return avroEncode(nil, s, v, "")
}

func avroEncode(buf []byte, s avro.Schema, v any, path string) ([]byte, error) {
	s = deref(s)
	fail := func(want string) ([]byte, error) {
		return nil, fmt.Errorf("at '%s': want %s, got %s", pathOrRoot(path), want, mustJSON(v))
	}
	switch s.Type() {
	case avro.Null:
		if v != nil {
			return fail("null")
		}
		return buf, nil
	case avro.Boolean:
		b, ok := v.(bool)
		if !ok {
			return fail("a boolean")
		}
		if b {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	case avro.Int, avro.Long:
		n, ok := v.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil || (s.Type() == avro.Int && (i < math.MinInt32 || i > math.MaxInt32)) {
			return fail("an " + string(s.Type()))
		}
		return binary.AppendVarint(buf, i), nil
	case avro.Float, avro.Double:
		n, ok := v.(json.Number)
		f, err := n.Float64()
		if !ok || err != nil {
			return fail("a number")
		}
		if s.Type() == avro.Float {
			return binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(f))), nil
		}
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(f)), nil
	case avro.String, avro.Bytes:
		str, ok := v.(string)
		if !ok {
			return fail("a string")
		}
		b := []byte(str)
		if s.Type() == avro.Bytes {
			if b, ok = codePoints(str); !ok {
				return fail("a string of code points 0-255")
			}
		}
		return append(binary.AppendVarint(buf, int64(len(b))), b...), nil
	case avro.Fixed:
		str, ok := v.(string)
		b, okb := codePoints(str)
		if !ok || !okb || len(b) != s.(*avro.FixedSchema).Size() {
			return fail(fmt.Sprintf("a string of %d code points 0-255", s.(*avro.FixedSchema).Size()))
		}
		return append(buf, b...), nil
	case avro.Enum:
		str, ok := v.(string)
		i := slices.Index(s.(*avro.EnumSchema).Symbols(), str)
		if !ok || i < 0 {
			return fail(fmt.Sprintf("one of %v", s.(*avro.EnumSchema).Symbols()))
		}
		return binary.AppendVarint(buf, int64(i)), nil
	case avro.Array:
		items, ok := v.([]any)
		if !ok {
			return fail("an array")
		}
		if len(items) > 0 {
			buf = binary.AppendVarint(buf, int64(len(items)))
			for i, item := range items {
				var err error
				if buf, err = avroEncode(buf, s.(*avro.ArraySchema).Items(), item, fmt.Sprintf("%s/%d", path, i)); err != nil {
					return nil, err
				}
			}
		}
		return append(buf, 0), nil
	case avro.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return fail("an object")
		}
		if len(m) > 0 {
			buf = binary.AppendVarint(buf, int64(len(m)))
			for _, k := range sortedKeys(m) {
				buf = append(binary.AppendVarint(buf, int64(len(k))), k...)
				var err error
				if buf, err = avroEncode(buf, s.(*avro.MapSchema).Values(), m[k], path+"/"+k); err != nil {
					return nil, err
				}
			}
		}
		return append(buf, 0), nil
	case avro.Union:
		return avroEncodeUnion(buf, s.(*avro.UnionSchema), v, path)
	case avro.Record, avro.Error:
		m, ok := v.(map[string]any)
		if !ok {
			return fail("an object")
		}
		for _, f := range s.(*avro.RecordSchema).Fields() {
			fv, present := m[f.Name()]
			if !present {
				if !f.HasDefault() {
					return nil, fmt.Errorf("at '%s': field %s is missing and has no default", pathOrRoot(path), f.Name())
				}
				fv = jsonValue(f.Default())
			}
			var err error
			if buf, err = avroEncode(buf, f.Type(), fv, path+"/"+f.Name()); err != nil {
				return nil, err
			}
		}
		return buf, nil
	}
	return nil, fmt.Errorf("at '%s': unsupported Avro type %s", pathOrRoot(path), s.Type())
}

// avroEncodeUnion takes {"branch": value} (Avro's JSON encoding), null,
// or, leniently, a bare value the first fitting branch encodes.
func avroEncodeUnion(buf []byte, u *avro.UnionSchema, v any, path string) ([]byte, error) {
	if v == nil {
		for i, b := range u.Types() {
			if b.Type() == avro.Null {
				return binary.AppendVarint(buf, int64(i)), nil
			}
		}
		return nil, fmt.Errorf("at '%s': null is not in the union", pathOrRoot(path))
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for k, inner := range m {
			for i, b := range u.Types() {
				if branchName(b) == k || unqualified(branchName(b)) == k {
					return avroEncode(binary.AppendVarint(buf, int64(i)), b, inner, path)
				}
			}
		}
	}
	for i, b := range u.Types() {
		if out, err := avroEncode(binary.AppendVarint(slices.Clone(buf), int64(i)), b, v, path); err == nil {
			return out, nil
		}
	}
	return nil, fmt.Errorf("at '%s': %s fits no branch of the union", pathOrRoot(path), mustJSON(v))
}

func branchName(s avro.Schema) string {
	s = deref(s)
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}

func codePoints(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 255 {
			return nil, false
		}
		out = append(out, byte(r))
	}
	return out, true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonValue turns a Go value (a field default from hamba) into what
// decoding its JSON with UseNumber gives.
func jsonValue(v any) any {
	var out any
	dec := json.NewDecoder(bytes.NewReader(mustJSON(v)))
	dec.UseNumber()
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}

func pathOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// avroDecodeJSON reads one datum of s from b into a JSON-ready value.
func avroDecodeJSON(s avro.Schema, b []byte) (any, error) {
	d := avroDecoder{b: b}
	v := d.decode(s)
	if d.err != nil {
		return nil, d.err
	}
	return v, nil
}

type avroDecoder struct {
	b   []byte
	err error
}

var errAvroShort = errors.New("the Avro datum ends early")

func (d *avroDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errAvroShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *avroDecoder) take(n int64) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || int64(len(d.b)) < n {
		d.err = errAvroShort
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *avroDecoder) decode(s avro.Schema) any {
	s = deref(s)
	if d.err != nil {
		return nil
	}
	switch s.Type() {
	case avro.Null:
		return nil
	case avro.Boolean:
		b := d.take(1)
		return len(b) == 1 && b[0] != 0
	case avro.Int, avro.Long:
		return d.varint()
	case avro.Float:
		if b := d.take(4); b != nil {
			return math.Float32frombits(binary.LittleEndian.Uint32(b))
		}
	case avro.Double:
		if b := d.take(8); b != nil {
			return math.Float64frombits(binary.LittleEndian.Uint64(b))
		}
	case avro.String:
		return string(d.take(d.varint()))
	case avro.Bytes:
		return fromCodePoints(d.take(d.varint()))
	case avro.Fixed:
		return fromCodePoints(d.take(int64(s.(*avro.FixedSchema).Size())))
	case avro.Enum:
		i := d.varint()
		if sym, ok := s.(*avro.EnumSchema).Symbol(int(i)); ok {
			return sym
		}
		d.err = fmt.Errorf("enum index %d out of range", i)
	case avro.Array:
		out := []any{}
		d.blocks(func() { out = append(out, d.decode(s.(*avro.ArraySchema).Items())) })
		return out
	case avro.Map:
		out := map[string]any{}
		d.blocks(func() {
			k := string(d.take(d.varint()))
			out[k] = d.decode(s.(*avro.MapSchema).Values())
		})
		return out
	case avro.Union:
		i := d.varint()
		types := s.(*avro.UnionSchema).Types()
		if i < 0 || int(i) >= len(types) {
			d.err = fmt.Errorf("union index %d out of range", i)
			return nil
		}
		if types[i].Type() == avro.Null {
			return nil
		}
		return map[string]any{branchName(types[i]): d.decode(types[i])}
	case avro.Record, avro.Error:
		out := map[string]any{}
		for _, f := range s.(*avro.RecordSchema).Fields() {
			out[f.Name()] = d.decode(f.Type())
		}
		return out
	default:
		d.err = fmt.Errorf("unsupported Avro type %s", s.Type())
	}
	return nil
}

// blocks reads an array's or map's blocks, calling item per item.
func (d *avroDecoder) blocks(item func()) {
	for d.err == nil {
		n := d.varint()
		if n == 0 {
			return
		}
		if n < 0 {
			n = -n
			d.varint() // the block's size in bytes
		}
		for range n {
			item()
		}
	}
}

func fromCodePoints(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}
