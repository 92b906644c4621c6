package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No bar where nobody watches: a buffer, a pipe, an unknown total; and
// `samsa produce FILE` with stderr not a terminal prints only its summary.
func TestProgressOnlyOnATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "pipe": w} {
		if p := newProgress(out, 100, "x", false); p != nil {
			t.Errorf("a bar on a %s", name)
		}
	}
	if p := newProgress(os.Stderr, 0, "x", false); p != nil {
		t.Errorf("a bar with no total")
	}
	var nilBar *progress // every method is safe on nil
	nilBar.set(3)
	nilBar.finish()
	if got := nilBar.reader(strings.NewReader("x")); got == nil {
		t.Errorf("nil bar's reader is nil")
	}
}

// A bar counts the bytes read through it up to the file's size, and
// finishes.
func TestProgressCountsWhatIsRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "in.txt")
	data := strings.Repeat("record\n", 1000)
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	var screen bytes.Buffer
	p := drawProgress(&screen, int64(len(data)), "in.txt", true)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := io.Copy(io.Discard, p.reader(f))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.bar.State().CurrentNum; got != n || n != int64(len(data)) {
		t.Errorf("bar at %d after reading %d of %d bytes", got, n, len(data))
	}
	p.finish()
	if !p.bar.IsFinished() {
		t.Errorf("bar not finished: %q", screen.String())
	}
}
