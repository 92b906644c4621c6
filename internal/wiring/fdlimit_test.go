package wiring

import "testing"

func TestDefaultMaxConnections(t *testing.T) {
	for _, tc := range []struct {
		nofile uint64
		want   int
	}{
		{1, 1},
		{256, 64},
		{1024, 256},
		{20000, 8976},
		{1 << 20, (1<<20 - 2048) / 2},
		{^uint64(0), 1<<31 - 1},
	} {
		if got := defaultMaxConnections(tc.nofile); got != tc.want {
			t.Errorf("defaultMaxConnections(%d) = %d, want %d", tc.nofile, got, tc.want)
		}
	}
}
