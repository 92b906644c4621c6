package main

import (
	"os"
	"testing"
)

func TestNextLimit(t *testing.T) {
	for _, c := range []struct {
		name                       string
		limit, live, ceiling, want int64
	}{
		{"small live heap keeps the default", defaultMemoryLimit, 10 << 20, 0, defaultMemoryLimit},
		{"exactly three quarters keeps it", 44 << 20, 33 << 20, 0, 44 << 20},
		{"past three quarters doubles the live heap", 44 << 20, 34 << 20, 0, 68 << 20},
		{"a large live heap", 44 << 20, 200 << 20, 0, 400 << 20},
		{"a burst gone brings it down", 700 << 20, 100 << 20, 0, 200 << 20},
		{"but not under the default", 700 << 20, 5 << 20, 0, defaultMemoryLimit},
		{"between a quarter and three quarters it stays", 700 << 20, 300 << 20, 0, 700 << 20},
		{"the ceiling caps a raise", 300 << 20, 350 << 20, 500 << 20, 500 << 20},
		{"a lowered ceiling lowers the limit", 800 << 20, 350 << 20, 500 << 20, 500 << 20},
		{"a ceiling under the default leaves the default", defaultMemoryLimit, 10 << 20, 8 << 20, defaultMemoryLimit},
	} {
		if got := nextLimit(c.limit, c.live, c.ceiling); got != c.want {
			t.Errorf("%s: nextLimit(%d, %d, %d) = %d; want %d", c.name, c.limit, c.live, c.ceiling, got, c.want)
		}
	}
}

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		content string
		want    int64
	}{
		{"1073741824\n", 1 << 30},
		{"max\n", 0},
		{"9223372036854771712\n", 0}, // v1's "no limit"
		{"", 0},
	} {
		p := dir + "/limit"
		if err := os.WriteFile(p, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := readLimit(p); got != c.want {
			t.Errorf("readLimit(%q) = %d, want %d", c.content, got, c.want)
		}
	}
	if got := readLimit(dir + "/absent"); got != 0 {
		t.Errorf("readLimit of a missing file = %d", got)
	}
}
