package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is a progress bar on stderr for long work (produce from a
// file, consume -c N), shown only where someone watches: when stderr is
// a terminal. A nil *progress shows nothing, so callers need not check.
type progress struct{ bar *progressbar.ProgressBar }

// newProgress returns a bar counting to total (bytes when inBytes, else
// records) on w, or nil when w is not a terminal or total is unknown.
func newProgress(w io.Writer, total int64, description string, inBytes bool) *progress {
	if total <= 0 || !isTerminal(w) {
		return nil
	}
	return drawProgress(w, total, description, inBytes)
}

// drawProgress is newProgress on any writer.
func drawProgress(w io.Writer, total int64, description string, inBytes bool) *progress {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(progressThrottle),
		progressbar.OptionClearOnFinish(), // the summary line follows
	}
	if inBytes {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("records"))
	}
	return &progress{bar: progressbar.NewOptions64(total, opts...)}
}

// progressThrottle bounds how often the bar redraws.
const progressThrottle = 100 * time.Millisecond

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// reader counts what is read through r.
func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return io.TeeReader(r, p.bar)
}

// set moves the bar to n.
func (p *progress) set(n int64) {
	if p != nil {
		_ = p.bar.Set64(n)
	}
}

// finish clears the bar.
func (p *progress) finish() {
	if p != nil {
		_ = p.bar.Finish()
	}
}
