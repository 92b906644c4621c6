package jsonavro

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/hamba/avro/v2"
)

// fromJSON turns a decoded JSON value into the Go value hamba/avro
// encodes for schema s; path names the place for errors.
func fromJSON(s avro.Schema, v any, path string) (any, error) {
	switch s := s.(type) {
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an object for record %s", where(path), s.Name())
		}
		out := make(map[string]any, len(s.Fields()))
		for _, f := range s.Fields() {
			fv, ok := m[f.Name()]
			if !ok {
				if !f.HasDefault() {
					return nil, fmt.Errorf("%s: missing field %q", where(path), f.Name())
				}
				out[f.Name()] = f.Default()
				continue
			}
			nv, err := fromJSON(f.Type(), fv, path+"."+f.Name())
			if err != nil {
				return nil, err
			}
			out[f.Name()] = nv
		}
		return out, nil
	case *avro.ArraySchema:
		xs, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an array", where(path))
		}
		out := make([]any, len(xs))
		for i, x := range xs {
			nv, err := fromJSON(s.Items(), x, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an object for a map", where(path))
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			nv, err := fromJSON(s.Values(), x, path+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = nv
		}
		return out, nil
	case *avro.UnionSchema:
		return unionFromJSON(s, v, path)
	case *avro.EnumSchema:
		str, ok := v.(string)
		if !ok || !slices.Contains(s.Symbols(), str) {
			return nil, fmt.Errorf("%s: want one of %v", where(path), s.Symbols())
		}
		return str, nil
	case *avro.PrimitiveSchema:
		return primitiveFromJSON(s.Type(), v, path)
	}
	return nil, fmt.Errorf("%s: Avro type %s is not supported by this converter", where(path), s.Type())
}

// unionFromJSON takes null for a nullable union, else the first branch
// the value fits.
func unionFromJSON(s *avro.UnionSchema, v any, path string) (any, error) {
	if v == nil {
		if s.Nullable() {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: null is not allowed", where(path))
	}
	for _, branch := range s.Types() {
		if branch.Type() == avro.Null {
			continue
		}
		if nv, err := fromJSON(branch, v, path); err == nil {
			return nv, nil
		}
	}
	return nil, fmt.Errorf("%s: fits no branch of the union", where(path))
}

func primitiveFromJSON(t avro.Type, v any, path string) (any, error) {
	bad := func(want string) error { return fmt.Errorf("%s: want %s, got %v", where(path), want, v) }
	switch t {
	case avro.Null:
		if v != nil {
			return nil, bad("null")
		}
		return nil, nil
	case avro.Boolean:
		return typed[bool](v, bad("a boolean"))
	case avro.String:
		return typed[string](v, bad("a string"))
	case avro.Bytes:
		if str, ok := v.(string); ok {
			return []byte(str), nil
		}
		return nil, bad("a string (bytes)")
	case avro.Int, avro.Long:
		n, _ := v.(json.Number)
		i, err := n.Int64()
		switch {
		case err != nil:
			return nil, bad("an integer")
		case t == avro.Long:
			return i, nil
		case i < math.MinInt32 || i > math.MaxInt32:
			return nil, bad("an int (32 bits)")
		}
		return int(i), nil
	case avro.Float, avro.Double:
		n, _ := v.(json.Number)
		if f, err := n.Float64(); err == nil && t == avro.Double {
			return f, nil
		} else if err == nil {
			return float32(f), nil
		}
		return nil, bad("a number")
	}
	return nil, fmt.Errorf("%s: Avro type %s is not supported by this converter", where(path), t)
}

// typed is v if it is a T, else err.
func typed[T any](v any, err error) (any, error) {
	if x, ok := v.(T); ok {
		return x, nil
	}
	return nil, err
}

func where(path string) string {
	if path == "" {
		return "the document"
	}
	return path[1:]
}
