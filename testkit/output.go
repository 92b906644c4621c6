package testkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
)

// maxKeptOutput bounds how much of a child process's output is kept in
// memory: the newest bytes win, since the end of a log explains a failure.
const maxKeptOutput = 4 << 20

// outputLog collects a child process's stdout and stderr, splits it into
// lines, hands each line to a watcher (readiness detection) and to an
// optional tee, and keeps the tail for test logs. Safe for concurrent use.
type outputLog struct {
	mu      sync.Mutex
	kept    []byte // tail of the output, at most maxKeptOutput bytes
	dropped int64  // bytes discarded from the front of kept
	partial []byte // an unterminated last line
	watch   func(line string)
	tee     io.Writer
	changed chan struct{} // closed (and replaced) by every Write
}

func (o *outputLog) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.changed != nil {
		close(o.changed)
		o.changed = nil
	}
	o.kept = append(o.kept, p...)
	if over := len(o.kept) - maxKeptOutput; over > 0 {
		o.kept = append(o.kept[:0], o.kept[over:]...)
		o.dropped += int64(over)
	}
	if o.tee != nil {
		_, _ = o.tee.Write(p)
	}
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		line := string(o.partial[:i])
		o.partial = o.partial[i+1:]
		if o.watch != nil {
			o.watch(line)
		}
	}
	return len(p), nil
}

// setWatch installs the line watcher; it is called with the lock held, so
// it must not call back into o.
func (o *outputLog) setWatch(f func(string)) {
	o.mu.Lock()
	o.watch = f
	o.mu.Unlock()
}

// mark returns the current end of the output, for since.
func (o *outputLog) mark() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dropped + int64(len(o.kept))
}

// since returns the output written after mark m (or what is left of it).
func (o *outputLog) since(m int64) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	start := m - o.dropped
	if start < 0 {
		start = 0
	}
	if start > int64(len(o.kept)) {
		return ""
	}
	return string(o.kept[start:])
}

func (o *outputLog) String() string { return o.since(0) }

// waitFor waits until the output after mark m contains substr, or ctx
// ends, woken by each write (no polling); it returns that output.
func (o *outputLog) waitFor(ctx context.Context, m int64, substr string) (string, error) {
	for {
		o.mu.Lock()
		start := max(m-o.dropped, 0)
		var out string
		if start <= int64(len(o.kept)) {
			out = string(o.kept[start:])
		}
		if strings.Contains(out, substr) {
			o.mu.Unlock()
			return out, nil
		}
		if o.changed == nil {
			o.changed = make(chan struct{})
		}
		ch := o.changed
		o.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return out, fmt.Errorf("testkit: %q not in the broker's output: %w", substr, ctx.Err())
		}
	}
}
