package segment

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// A durable segment in Kafka's message format v0 or v1, or in a format
// newer than v2, is refused with ErrUnsupportedFormat, naming the file
// and the magic, and the segment is left as it was (recovery would have
// cut the log there).
func TestUnsupportedFormatIsRefusedNotCut(t *testing.T) {
	for _, magic := range []byte{0, 1, 3} {
		mem := vfs.NewMemFS()
		d := testDir(t, mem)
		l, _ := openLog(t, d, Config{})
		fillLog(t, l, 3)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		f, _ := mem.OpenReadWrite(activeLog)
		if _, err := f.WriteAt([]byte{magic}, wire.BatchMagicPos); err != nil {
			t.Fatal(err)
		}
		before, _ := vfs.ReadFile(mem, activeLog)
		f.Close()
		_, _, err := testDir(t, mem).Open("topic", 0, Config{})
		if !errors.Is(err, ErrUnsupportedFormat) || !strings.Contains(err.Error(), activeLog) {
			t.Fatalf("magic %d: err = %v, want ErrUnsupportedFormat naming %s", magic, err, activeLog)
		}
		if after, _ := vfs.ReadFile(mem, activeLog); !bytes.Equal(before, after) {
			t.Fatalf("magic %d: the refused segment was changed (%d bytes, was %d)", magic, len(after), len(before))
		}
	}
}
