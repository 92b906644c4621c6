package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/twmb/franz-go/pkg/kgo"
)

var allCodecs = []int{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}

// samplePayloads: empty, tiny, text-like, incompressible, and large enough
// to span many xerial and lz4 blocks.
func samplePayloads() [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 70_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	var text bytes.Buffer
	for i := 0; text.Len() < 300_000; i++ {
		fmt.Fprintf(&text, `{"id":%d,"user":"user-%d","event":"click","ts":%d}`+"\n", i, i%97, 1700000000000+i)
	}
	return [][]byte{{}, []byte("x"), text.Bytes(), random}
}

func TestCompressRoundTrip(t *testing.T) {
	for _, codec := range allCodecs {
		for i, p := range samplePayloads() {
			c, err := Compress([]byte("pre"), codec, p)
			if err != nil {
				t.Fatalf("codec %d payload %d: %v", codec, i, err)
			}
			if string(c[:3]) != "pre" {
				t.Fatal("Compress clobbered dst")
			}
			c = c[3:]
			got, err := Decompress([]byte("dst"), codec, c, len(p))
			if err != nil {
				t.Fatalf("codec %d payload %d: %v", codec, i, err)
			}
			if string(got[:3]) != "dst" || !bytes.Equal(got[3:], p) {
				t.Fatalf("codec %d payload %d: round trip differs (%d vs %d bytes)", codec, i, len(got)-3, len(p))
			}
			if codec != CodecNone && len(p) > 1000 && i == 2 && len(c) >= len(p)/2 {
				t.Fatalf("codec %d did not compress text: %d -> %d", codec, len(p), len(c))
			}
		}
	}
}

// TestInteropFranzGo checks both directions against an independent
// implementation: what franz-go clients send decodes here, and what this
// package writes decodes in franz-go (test-only import; wire itself must
// not import kgo, which pulls in net).
func TestInteropFranzGo(t *testing.T) {
	kgoCodec := map[int]kgo.CompressionCodec{
		CodecGzip: kgo.GzipCompression(), CodecSnappy: kgo.SnappyCompression(),
		CodecLZ4: kgo.Lz4Compression(), CodecZstd: kgo.ZstdCompression(),
	}
	dec := kgo.DefaultDecompressor()
	for codec, kc := range kgoCodec {
		comp, err := kgo.DefaultCompressor(kc)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range samplePayloads()[1:] {
			var buf bytes.Buffer
			theirs, typ := comp.Compress(&buf, p)
			if int(typ) != codec {
				t.Fatalf("kgo used codec %d for %d", typ, codec)
			}
			got, err := Decompress(nil, codec, theirs, len(p))
			if err != nil || !bytes.Equal(got, p) {
				t.Fatalf("codec %d payload %d: decoding kgo output: %v", codec, i, err)
			}
			ours, err := Compress(nil, codec, p)
			if err != nil {
				t.Fatal(err)
			}
			back, err := dec.Decompress(ours, kgo.CompressionCodecType(codec))
			if err != nil || !bytes.Equal(back, p) {
				t.Fatalf("codec %d payload %d: kgo decoding ours: %v", codec, i, err)
			}
		}
	}
}

// TestSnappyXerialHandBuilt decodes a xerial stream assembled byte by byte
// (header, then length-prefixed raw blocks of uneven sizes), independently
// of AppendSnappyXerial.
func TestSnappyXerialHandBuilt(t *testing.T) {
	parts := [][]byte{bytes.Repeat([]byte("kafka "), 1000), []byte("tail"), bytes.Repeat([]byte{7}, 40_000)}
	frame := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}
	var want []byte
	for _, p := range parts {
		blk := snappy.Encode(nil, p)
		frame = binary.BigEndian.AppendUint32(frame, uint32(len(blk)))
		frame = append(frame, blk...)
		want = append(want, p...)
	}
	got, err := Decompress(nil, CodecSnappy, frame, len(want))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("hand-built xerial: %v (%d bytes, want %d)", err, len(got), len(want))
	}
	// And our writer's framing has that exact header and block layout.
	ours := AppendSnappyXerial(nil, want)
	if !bytes.Equal(ours[:16], frame[:16]) {
		t.Fatalf("xerial header %x", ours[:16])
	}
	first := binary.BigEndian.Uint32(ours[16:])
	n, err := snappy.DecodedLen(ours[20 : 20+first])
	if err != nil || n != xerialBlockSize {
		t.Fatalf("first xerial block decodes to %d bytes (%v), want %d", n, err, xerialBlockSize)
	}
	// Truncated framing is corrupt, not a panic.
	for _, cut := range []int{17, 21, len(frame) - 1} {
		if _, err := Decompress(nil, CodecSnappy, frame[:cut], 1<<20); !errors.Is(err, ErrCorruptCompressed) {
			t.Fatalf("xerial cut at %d: %v", cut, err)
		}
	}
}

func TestSnappyRawAndStrict(t *testing.T) {
	p := bytes.Repeat([]byte("abcdefgh"), 5000)
	got, err := Decompress(nil, CodecSnappy, AppendSnappyBlock(nil, p), len(p))
	if err != nil || !bytes.Equal(got, p) {
		t.Fatalf("raw block: %v", err)
	}
	// s2.Encode on repetitive data uses the repeat-offset extension that
	// standard snappy (and Java) cannot read.
	s2only := s2.Encode(nil, p)
	if _, err := snappy.Decode(nil, s2only); err != nil {
		t.Skip("s2 output happens to be plain snappy; strictness not exercised")
	}
	if _, err := snappy.DecodeStrict(nil, s2only); err == nil {
		t.Skip("s2 output happens to be plain snappy; strictness not exercised")
	}
	if _, err := Decompress(nil, CodecSnappy, s2only, len(p)); !errors.Is(err, ErrCorruptCompressed) {
		t.Fatalf("S2-only block accepted: %v", err)
	}
}

// TestDecompressLimit: a small input that expands past the limit fails
// without producing the output (a decompression bomb), and the limit is
// inclusive.
func TestDecompressLimit(t *testing.T) {
	zeros := make([]byte, 8<<20)
	for _, codec := range allCodecs {
		c, err := Compress(nil, codec, zeros)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decompress(nil, codec, c, 1<<20); !errors.Is(err, ErrDecompressLimit) {
			t.Fatalf("codec %d: 8 MiB under a 1 MiB limit: %v", codec, err)
		}
		if out, err := Decompress(nil, codec, c, len(zeros)); err != nil || len(out) != len(zeros) {
			t.Fatalf("codec %d: exactly at the limit: %v", codec, err)
		}
		if _, err := Decompress(nil, codec, c, len(zeros)-1); !errors.Is(err, ErrDecompressLimit) {
			t.Fatalf("codec %d: one byte over: %v", codec, err)
		}
	}
	// A raw snappy block whose header claims 1 GiB is refused before
	// allocating it.
	claim := binary.AppendUvarint(nil, 1<<30)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Decompress(nil, CodecSnappy, claim, 1<<20); !errors.Is(err, ErrDecompressLimit) {
		t.Fatalf("claimed 1 GiB: %v", err)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
		t.Fatalf("refusing a bomb allocated %d bytes", d)
	}
}

func TestDecompressCorrupt(t *testing.T) {
	garbage := []byte("this is not compressed data at all, not even close")
	for _, codec := range allCodecs[1:] {
		if _, err := Decompress(nil, codec, garbage, 1<<20); !errors.Is(err, ErrCorruptCompressed) {
			t.Errorf("codec %d on garbage: %v", codec, err)
		}
		c, _ := Compress(nil, codec, bytes.Repeat([]byte("0123456789"), 1000))
		if _, err := Decompress(nil, codec, c[:len(c)/2], 1<<20); !errors.Is(err, ErrCorruptCompressed) {
			t.Errorf("codec %d truncated: %v", codec, err)
		}
	}
	if _, err := Decompress(nil, 5, garbage, 100); !errors.Is(err, ErrCodecUnknown) {
		t.Fatalf("codec 5: %v", err)
	}
	if _, err := Compress(nil, 7, garbage); !errors.Is(err, ErrCodecUnknown) {
		t.Fatalf("codec 7: %v", err)
	}
}

// FuzzDecompress: no input may panic or exceed the limit.
func FuzzDecompress(f *testing.F) {
	for _, e := range decompressSeeds() {
		f.Add(e.args[0].(byte), e.args[1].([]byte))
	}
	f.Fuzz(func(t *testing.T, codec byte, src []byte) {
		const limit = 1 << 20
		out, err := Decompress(nil, int(codec%6), src, limit)
		if err == nil && len(out) > limit {
			t.Fatalf("output %d bytes over the limit", len(out))
		}
		if err == nil && codec%6 > CodecZstd {
			t.Fatal("unknown codec accepted")
		}
	})
}

func decompressSeeds() []corpusEntry {
	var out []corpusEntry
	p := samplePayloads()[2][:4000]
	for _, codec := range allCodecs {
		c, err := Compress(nil, codec, p)
		if err != nil {
			panic(err)
		}
		out = append(out, corpusEntry{fmt.Sprintf("codec%d", codec), []any{byte(codec), c}})
	}
	out = append(out, corpusEntry{"snappy-raw", []any{byte(CodecSnappy), AppendSnappyBlock(nil, p)}})
	return out
}

func init() { extraCorporaFns["FuzzDecompress"] = decompressSeeds }
