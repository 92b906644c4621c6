package main

import "testing"

func TestRaisedLimit(t *testing.T) {
	for _, c := range []struct {
		limit, live, want int64
		raise             bool
	}{
		{44 << 20, 10 << 20, 44 << 20, false},
		{44 << 20, 33 << 20, 44 << 20, false}, // exactly three quarters
		{44 << 20, 34 << 20, 68 << 20, true},
		{44 << 20, 200 << 20, 400 << 20, true},
	} {
		got, raise := raisedLimit(c.limit, c.live)
		if got != c.want || raise != c.raise {
			t.Errorf("raisedLimit(%d, %d) = %d, %v; want %d, %v", c.limit, c.live, got, raise, c.want, c.raise)
		}
	}
}
