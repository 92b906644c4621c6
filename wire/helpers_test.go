package wire

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// tagsType is kmsg's unknown-tags field type, which fill leaves empty.
var tagsType = reflect.TypeOf(kmsg.Tags{})

// fill populates every exported field of the value v points to with
// non-default data (two elements per array, strings, set pointers), so an
// encoded message exercises every field its version has. seed varies the
// values.
func fill(v reflect.Value, seed int, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 6 {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), seed, depth+1)
	case reflect.Struct:
		if v.Type() == tagsType {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Name == "Version" {
				continue
			}
			fill(v.Field(i), seed+i, depth+1)
		}
	case reflect.Slice:
		if depth > 6 {
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(fmt.Sprintf("bytes-%d", seed)))
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(s.Index(i), seed*3+i, depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			v.Index(i).SetUint(uint64(seed + i))
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("name-%d", seed))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(seed%100 + 1))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(seed%100 + 1))
	case reflect.Float64:
		v.SetFloat(float64(seed) + 0.5)
	}
}

// sampleRequest returns a request of key at version with every field set.
// ApiVersions gets a valid client software name (the KIP-511 pattern).
func sampleRequest(key, version int16) kmsg.Request {
	r := kmsg.RequestForKey(key)
	fill(reflect.ValueOf(r), int(key)*7+int(version), 0)
	r.SetVersion(version)
	if av, ok := r.(*kmsg.ApiVersionsRequest); ok {
		av.ClientSoftwareName = "samsa-test"
		av.ClientSoftwareVersion = "1.0.0"
	}
	return r
}

// encodeFrame encodes r as a client would, without the 4-byte size prefix.
func encodeFrame(r kmsg.Request, correlationID int32, clientID string) []byte {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))
	return f.AppendRequest(nil, r, correlationID)[4:]
}

// allRows is the served table and the planned one: the seed corpus and
// round-trip tests cover both, so enabling a planned API needs no new
// fixtures.
func allRows() []APIRange {
	return append(append(append([]APIRange(nil), APIs...), plannedAPIs...), slices.Concat(TransactionAPIs, ShareGroupAPIs)...)
}
