package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression errors. Decompress wraps them with the codec and detail.
var (
	ErrCodecUnknown      = errors.New("wire: unknown compression codec")
	ErrDecompressLimit   = errors.New("wire: decompressed data exceeds the limit")
	ErrCorruptCompressed = errors.New("wire: corrupt compressed data")
)

// xerialMagic opens a snappy stream in the framing of snappy-java's
// SnappyOutputStream, which the Java producer uses: the magic, then int32
// version and int32 compatible version (both 1), then blocks of
// int32 length + raw snappy block.
var xerialMagic = [8]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderSize = 16
	xerialBlockSize  = 32 << 10 // snappy-java's default block
	// zstdMaxWindow bounds the window a hostile zstd frame can make the
	// decoder allocate; producers use far smaller windows.
	zstdMaxWindow = 32 << 20
)

// Decompress appends to dst the decompression of src, a batch's records
// section compressed with codec (CodecNone..CodecZstd). The output may not
// exceed limit bytes (beyond it: ErrDecompressLimit, so a decompression
// bomb costs at most limit bytes of memory). Snappy accepts both raw blocks
// and xerial framing, decoded strictly: S2-only encodings that a Java
// consumer could not read are rejected as corrupt. Corrupt input returns
// ErrCorruptCompressed. The result never aliases src.
func Decompress(dst []byte, codec int, src []byte, limit int) ([]byte, error) {
	switch codec {
	case CodecNone:
		if len(src) > limit {
			return dst, fmt.Errorf("%w (%d > %d)", ErrDecompressLimit, len(src), limit)
		}
		return append(dst, src...), nil
	case CodecGzip:
		return decompressGzip(dst, src, limit)
	case CodecSnappy:
		if len(src) >= xerialHeaderSize && [8]byte(src[:8]) == xerialMagic {
			return decompressXerial(dst, src, limit)
		}
		return decompressSnappyBlock(dst, src, limit)
	case CodecLZ4:
		return decompressLZ4(dst, src, limit)
	case CodecZstd:
		return decompressZstd(dst, src, limit)
	}
	return dst, fmt.Errorf("%w (%d)", ErrCodecUnknown, codec)
}

// Compress appends to dst src compressed with codec, in the form Kafka's
// own broker writes: gzip stream, snappy in xerial framing, lz4 frame,
// zstd frame. CodecNone appends src unchanged.
func Compress(dst []byte, codec int, src []byte) ([]byte, error) {
	switch codec {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		w := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(w)
		return compressStream(dst, w, src)
	case CodecSnappy:
		return AppendSnappyXerial(dst, src), nil
	case CodecLZ4:
		w := lz4Writers.Get().(*lz4.Writer)
		defer lz4Writers.Put(w)
		return compressStream(dst, w, src)
	case CodecZstd:
		return zstdEncoder().EncodeAll(src, dst), nil
	}
	return dst, fmt.Errorf("%w (%d)", ErrCodecUnknown, codec)
}

// AppendSnappyXerial appends src compressed as snappy in xerial framing
// (32 KiB blocks), what snappy-java's SnappyOutputStream writes.
func AppendSnappyXerial(dst, src []byte) []byte {
	dst = append(dst, xerialMagic[:]...)
	dst = binary.BigEndian.AppendUint32(dst, 1)
	dst = binary.BigEndian.AppendUint32(dst, 1)
	for len(src) > 0 {
		n := min(len(src), xerialBlockSize)
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		dst = appendSnappyBlock(dst, src[:n])
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
		src = src[n:]
	}
	return dst
}

// AppendSnappyBlock appends src compressed as one raw snappy block, the
// form franz-go, librdkafka and sarama send.
func AppendSnappyBlock(dst, src []byte) []byte { return appendSnappyBlock(dst, src) }

func appendSnappyBlock(dst, src []byte) []byte {
	need := snappy.MaxEncodedLen(len(src))
	dst = grow(dst, need)
	out := snappy.Encode(dst[len(dst):len(dst)+need], src)
	return dst[:len(dst)+len(out)]
}

func decompressSnappyBlock(dst, src []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, fmt.Errorf("%w: snappy: %v", ErrCorruptCompressed, err)
	}
	if n > limit {
		return dst, fmt.Errorf("%w: snappy block of %d bytes > %d", ErrDecompressLimit, n, limit)
	}
	dst = grow(dst, n)
	out, err := snappy.DecodeStrict(dst[len(dst):len(dst)+n], src)
	if err != nil {
		return dst, fmt.Errorf("%w: snappy: %v", ErrCorruptCompressed, err)
	}
	if len(out) != n {
		return dst, fmt.Errorf("%w: snappy: length mismatch", ErrCorruptCompressed)
	}
	return dst[:len(dst)+n], nil
}

func decompressXerial(dst, src []byte, limit int) ([]byte, error) {
	start := len(dst)
	src = src[xerialHeaderSize:]
	for len(src) > 0 {
		if len(src) < 4 {
			return dst[:start], fmt.Errorf("%w: xerial: truncated block length", ErrCorruptCompressed)
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return dst[:start], fmt.Errorf("%w: xerial: block of %d bytes past the end", ErrCorruptCompressed, n)
		}
		var err error
		dst, err = decompressSnappyBlock(dst, src[:n], limit-(len(dst)-start))
		if err != nil {
			return dst[:start], err
		}
		src = src[n:]
	}
	return dst, nil
}

var (
	gzipReaders = sync.Pool{}
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	lz4Readers  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	lz4Writers  = sync.Pool{New: func() any {
		w := lz4.NewWriter(nil)
		// 64 KiB blocks, as Kafka's own LZ4 stream writes; every Kafka
		// client's reader supports 64 KiB to 4 MiB blocks.
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			panic("wire: lz4 writer options: " + err.Error())
		}
		return w
	}}
	zstdReaders = sync.Pool{New: func() any {
		// Concurrency 1 makes the stream decoder synchronous (no
		// goroutines), so a pooled decoder needs no Close.
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(zstdMaxWindow))
		if err != nil {
			panic("wire: zstd decoder options: " + err.Error())
		}
		return d
	}}
	zstdEncOnce sync.Once
	zstdEnc     *zstd.Encoder
)

// zstdEncoder is shared: EncodeAll is safe for concurrent use.
func zstdEncoder() *zstd.Encoder {
	zstdEncOnce.Do(func() {
		var err error
		zstdEnc, err = zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithLowerEncoderMem(true))
		if err != nil {
			panic("wire: zstd encoder options: " + err.Error())
		}
	})
	return zstdEnc
}

func decompressGzip(dst, src []byte, limit int) ([]byte, error) {
	br := bytes.NewReader(src)
	var zr *gzip.Reader
	if p := gzipReaders.Get(); p != nil {
		zr = p.(*gzip.Reader)
		if err := zr.Reset(br); err != nil {
			gzipReaders.Put(zr)
			return dst, fmt.Errorf("%w: gzip: %v", ErrCorruptCompressed, err)
		}
	} else {
		var err error
		if zr, err = gzip.NewReader(br); err != nil {
			return dst, fmt.Errorf("%w: gzip: %v", ErrCorruptCompressed, err)
		}
	}
	out, err := readBounded(dst, zr, limit, len(src), "gzip")
	// Point the pooled reader at nothing so the pool does not pin src
	// (the error of reading a header from no bytes is expected).
	_ = zr.Reset(bytes.NewReader(nil))
	gzipReaders.Put(zr)
	return out, err
}

func decompressLZ4(dst, src []byte, limit int) ([]byte, error) {
	zr := lz4Readers.Get().(*lz4.Reader)
	zr.Reset(bytes.NewReader(src))
	out, err := readBounded(dst, zr, limit, len(src), "lz4")
	zr.Reset(nil)
	lz4Readers.Put(zr)
	return out, err
}

func decompressZstd(dst, src []byte, limit int) ([]byte, error) {
	zr := zstdReaders.Get().(*zstd.Decoder)
	defer zstdReaders.Put(zr)
	if err := zr.Reset(bytes.NewReader(src)); err != nil {
		return dst, fmt.Errorf("%w: zstd: %v", ErrCorruptCompressed, err)
	}
	out, err := readBounded(dst, zr, limit, len(src), "zstd")
	// Drop the decoder's reference to src so the pool does not pin it.
	_ = zr.Reset(nil)
	return out, err
}

// readBounded appends everything r yields to dst, failing once it would
// exceed limit bytes. It reads at most limit+1 bytes, so memory is bounded
// by the limit whatever the stream claims.
func readBounded(dst []byte, r io.Reader, limit, srcLen int, codec string) ([]byte, error) {
	start := len(dst)
	// First guess twice the input; appends double from there.
	dst = grow(dst, min(limit+1, 2*srcLen+1024))
	for {
		if len(dst) == cap(dst) {
			dst = grow(dst, min(limit+1-(len(dst)-start), max(cap(dst)-start, 4096)))
		}
		room := min(cap(dst)-len(dst), limit+1-(len(dst)-start))
		n, err := r.Read(dst[len(dst) : len(dst)+room])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst[:start], fmt.Errorf("%w: %s output over %d bytes", ErrDecompressLimit, codec, limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst[:start], fmt.Errorf("%w: %s: %v", ErrCorruptCompressed, codec, err)
		}
	}
}

// appendWriter is an io.Writer that appends to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// streamWriter is the part of gzip.Writer and lz4.Writer compressStream
// uses.
type streamWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

func compressStream(dst []byte, w streamWriter, src []byte) ([]byte, error) {
	aw := &appendWriter{b: dst}
	w.Reset(aw)
	if _, err := w.Write(src); err != nil {
		return dst, err
	}
	if err := w.Close(); err != nil {
		return dst, err
	}
	w.Reset(nil)
	return aw.b, nil
}

// grow returns b with room for at least n more bytes.
func grow(b []byte, n int) []byte {
	if n <= cap(b)-len(b) {
		return b
	}
	return append(b[:cap(b)], make([]byte, n-(cap(b)-len(b)))...)[:len(b)]
}
