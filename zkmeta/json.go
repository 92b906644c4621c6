package zkmeta

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Kafka writes its znodes with Jackson from Scala and Java maps, so the key
// order of each object is the iteration order of the map that held it. To
// match Kafka byte for byte, an object here is a list of fields put in the
// order the same map would yield them: see scalaMutableOrder,
// scalaImmutableOrder, javaHashMapOrder and propertiesOrder.

// field is one member of a JSON object: its key and its encoded value.
type field struct {
	key string
	raw []byte
}

// object encodes fields in the order given, without spaces, as Jackson does.
func object(fields []field) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, f.key)
		b.WriteByte(':')
		b.Write(f.raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// orderFields reorders fields by the key order order returns.
func orderFields(fields []field, order func([]string) []string) []field {
	keys := make([]string, len(fields))
	byKey := make(map[string]field, len(fields))
	for i, f := range fields {
		keys[i] = f.key
		byKey[f.key] = f
	}
	out := make([]field, 0, len(fields))
	for _, k := range order(keys) {
		out = append(out, byKey[k])
	}
	return out
}

func jInt(v int64) []byte { return strconv.AppendInt(nil, v, 10) }

func jStr(s string) []byte {
	var b bytes.Buffer
	writeString(&b, s)
	return b.Bytes()
}

func jInts(vs []int32) []byte {
	b := []byte{'['}
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']')
}

func jStrs(vs []string) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// writeString quotes s as Jackson does: '"' and '\' escaped, the control
// characters that have a short form (\b \t \n \f \r) in it, other control
// characters as \u00XX in upper-case hex, everything else (including '/',
// '<', '>', '&' and non-ASCII) verbatim in UTF-8.
func writeString(b *bytes.Buffer, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString("\ufffd")
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

// javaStringHash is java.lang.String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16Surrogates(r)
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// spread is the bit mixing of java.util.HashMap and Scala 2.13's
// mutable.HashMap: h ^ (h >>> 16).
func spread(h int32) uint32 { u := uint32(h); return u ^ u>>16 }

// tableSize is the bucket count of a hash table with load factor 0.75 and
// initial capacity 16 after n insertions. grownAt says whether the table
// grows once the size reaches the threshold (Java, after the insertion) or
// one before (Scala, which grows before inserting when size+1 >= threshold).
func tableSize(n int, scala bool) uint32 {
	size := uint32(16)
	for {
		threshold := int(size) * 3 / 4
		if scala && n < threshold || !scala && n <= threshold {
			return size
		}
		size *= 2
	}
}

// scalaMutableOrder is the iteration order of a Scala 2.13
// mutable.HashMap holding keys: by bucket, and by (signed) hash within a
// bucket. initial is the number of entries the map was built with
// (mutable.Map(k -> v, ...) sizes its table for them: the smallest power of
// two, at least 8, above (initial+1)/0.75 - 1; 0 means built empty, 16
// buckets); later insertions grow the table when size+1 reaches 3/4 of it.
func scalaMutableOrder(initial int, keys []string) []string {
	size := uint32(16)
	if initial > 0 {
		c := int(float64(initial+1) / 0.75)
		size = 1 << bits.Len32(uint32(max(c-1, 4))) // Integer.highestOneBit(x) * 2
	}
	for len(keys)+1 > int(size)*3/4 {
		size *= 2
	}
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b string) int {
		ha, hb := spread(javaStringHash(a)), spread(javaStringHash(b))
		if c := cmp.Compare(ha&(size-1), hb&(size-1)); c != 0 {
			return c
		}
		return cmp.Compare(int32(ha), int32(hb))
	})
	return out
}

// javaHashMapOrder is the iteration order of a java.util.HashMap holding
// keys inserted in the order given: by bucket, by insertion within one.
func javaHashMapOrder(keys []string) []string {
	size := tableSize(len(keys), false)
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b string) int {
		return cmp.Compare(spread(javaStringHash(a))&(size-1), spread(javaStringHash(b))&(size-1))
	})
	return out
}

// propertiesOrder is the iteration order of a java.util.Properties (since
// Java 9 a ConcurrentHashMap of 16 buckets) filled with keys in the order
// given: by bucket, in a bucket by insertion, except that a resize (when
// the count reaches 3/4 of the buckets) rebuilds each bucket as
// ConcurrentHashMap.transfer does, keeping the tail run and putting the
// nodes before it in reverse.
func propertiesOrder(keys []string) []string {
	n := 16
	table := make([][]string, n)
	hash := func(k string) uint32 { return spread(javaStringHash(k)) & 0x7fffffff }
	count := 0
	for _, k := range keys {
		i := hash(k) & uint32(n-1)
		if slices.Contains(table[i], k) {
			continue
		}
		table[i] = append(table[i], k)
		count++
		if count >= n-n>>2 {
			next := make([][]string, 2*n)
			for i, bin := range table {
				if len(bin) == 0 {
					continue
				}
				bit := func(k string) uint32 { return hash(k) & uint32(n) }
				last := 0
				runBit := bit(bin[0])
				for j := 1; j < len(bin); j++ {
					if b := bit(bin[j]); b != runBit {
						runBit, last = b, j
					}
				}
				var lo, hi []string
				if runBit == 0 {
					lo = slices.Clone(bin[last:])
				} else {
					hi = slices.Clone(bin[last:])
				}
				for j := 0; j < last; j++ {
					if bit(bin[j]) == 0 {
						lo = append([]string{bin[j]}, lo...)
					} else {
						hi = append([]string{bin[j]}, hi...)
					}
				}
				next[i], next[i+n] = lo, hi
			}
			table, n = next, 2*n
		}
	}
	var out []string
	for _, bin := range table {
		out = append(out, bin...)
	}
	return out
}

// scalaImmutableOrder is the iteration order of a Scala 2.13 immutable Map
// built from keys in the order given: insertion order up to four entries
// (Map1..Map4), otherwise a CHAMP HashMap, iterated depth first, a node's
// own entries (by 5-bit hash fragment) before its sub-nodes.
func scalaImmutableOrder(keys []string) []string {
	if len(keys) <= 4 {
		return slices.Clone(keys)
	}
	hashes := make(map[string]uint32, len(keys))
	for _, k := range keys {
		hashes[k] = scalaImprove(javaStringHash(k))
	}
	var walk func(ks []string, shift uint) []string
	walk = func(ks []string, shift uint) []string {
		if shift >= 32 {
			return ks // a hash collision node keeps insertion order
		}
		groups := make(map[uint32][]string)
		for _, k := range ks {
			frag := hashes[k] >> shift & 31
			groups[frag] = append(groups[frag], k)
		}
		frags := make([]uint32, 0, len(groups))
		for f := range groups {
			frags = append(frags, f)
		}
		slices.Sort(frags)
		var data, nodes []string
		for _, f := range frags {
			if g := groups[f]; len(g) == 1 {
				data = append(data, g[0])
			}
		}
		for _, f := range frags {
			if g := groups[f]; len(g) > 1 {
				nodes = append(nodes, walk(g, shift+5)...)
			}
		}
		return append(data, nodes...)
	}
	return walk(keys, 0)
}

// scalaImprove is scala.collection.Hashing.improve, which the CHAMP maps
// apply to a key's hashCode.
func scalaImprove(hcode int32) uint32 {
	h := hcode + ^(hcode << 9)
	h ^= int32(uint32(h) >> 14)
	h += h << 4
	return uint32(h ^ int32(uint32(h)>>10))
}

// decodeJSON unmarshals data into v with a message naming the znode.
func decodeJSON(what string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("zkmeta: %s: malformed JSON %q: %w", what, truncate(data), err)
	}
	return nil
}

func truncate(data []byte) []byte {
	if len(data) > 200 {
		return data[:200]
	}
	return data
}
