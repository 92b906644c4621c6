package segment

import (
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

// BenchmarkAppendOverhead is the CPU cost of an append without the write
// itself: the log runs on a filesystem whose writes to .log files are
// dropped, so what remains is validation (CRC-32C), offset assignment,
// index bookkeeping and the file-cache lookup.
func BenchmarkAppendOverhead(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		b.Run(sizeName(size), func(b *testing.B) {
			d, err := OpenDir("/data", Options{FS: discardFS{vfs.NewMemFS()}, Logger: quietLogger})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			l, _, err := d.Open("bench", 0, Config{FlushPolicy: FlushNever})
			if err != nil {
				b.Fatal(err)
			}
			batch := makeBatch(1, size-70, 1, 1)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := l.Append(batch, 0, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sizeName(size int) string {
	if size >= 1<<10 {
		return "size=" + itoa(size>>10) + "KiB"
	}
	return "size=" + itoa(size) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// discardFS drops writes to files opened for writing (sizes still grow).
type discardFS struct{ *vfs.MemFS }

type discardFile struct {
	vfs.File
	size int64
}

func (f *discardFile) WriteAt(p []byte, off int64) (int, error) {
	f.size = max(f.size, off+int64(len(p)))
	return len(p), nil
}

func (d discardFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := d.MemFS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return &discardFile{File: f}, nil
}

func (d discardFS) Create(name string) (vfs.File, error) {
	f, err := d.MemFS.Create(name)
	if err != nil {
		return nil, err
	}
	if len(name) > 4 && name[len(name)-4:] == LogSuffix {
		return &discardFile{File: f}, nil
	}
	return f, nil
}
