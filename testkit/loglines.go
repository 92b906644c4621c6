package testkit

import (
	"bytes"
	"strings"
	"sync"
)

// LogLines collects what a logger writes (slog.NewTextHandler(l, nil)),
// for tests that check a broker logged an event. Safe for concurrent
// use.
type LogLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Matching returns the lines that contain every one of parts (no parts:
// every line).
func (l *LogLines) Matching(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if line != "" && containsAll(line, parts) {
			out = append(out, line)
		}
	}
	return out
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
