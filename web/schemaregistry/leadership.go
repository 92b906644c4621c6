package schemaregistry

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"
)

// Leadership says which registry of a cluster writes: one at a time,
// so that ids and versions are handed out by one state. Every registry
// serves reads from its own copy of `_schemas`; the others forward
// writes to the writer. A single broker has no Leadership and writes.
type Leadership interface {
	// Writer is the base URL of the writing registry ("" when it is this
	// one) and the term of its election (a new number each time a
	// registry becomes the writer), or why there is none now.
	Writer() (url string, term int64, err error)
}

// forwardedHeader marks a forwarded request, so that one reaching a
// registry that is not (or no longer) the writer fails instead of
// bouncing between brokers.
const forwardedHeader = "X-Samsa-Forwarded"

// forwardTimeout bounds a forwarded write.
const forwardTimeout = 30 * time.Second

// SetLeadership makes the registry write only while l names it the
// writer, forwarding writes otherwise.
func (r *Registry) SetLeadership(l Leadership) {
	r.writeMu.Lock()
	r.leadership = l
	r.writeMu.Unlock()
}

// writerNow is where writes go now: "" here. When this registry has
// just become the writer it first reads `_schemas` to its end (a NOOP
// written and read back), so it plans on everything the previous writer
// wrote. The caller holds writeMu.
func (r *Registry) writerNow(ctx context.Context) (string, error) {
	if r.leadership == nil {
		return "", nil
	}
	url, term, err := r.leadership.Writer()
	for err != nil {
		// None elected right now (at startup, or the writer just went):
		// wait for the election within the request's time.
		select {
		case <-ctx.Done():
			return "", errorf(codeForwardingError, "no schema registry writer is elected: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		url, term, err = r.leadership.Writer()
	}
	if url != "" || term == r.syncedTerm {
		return url, nil
	}
	if err := r.append(ctx, noopRecord()); err != nil {
		return "", err
	}
	r.syncedTerm = term
	return "", nil
}

// writing wraps a write route: served here when this registry is the
// writer, else forwarded to the writer and its answer relayed.
func (r *Registry) writing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.writeMu.Lock()
		url, err := r.writerNow(req.Context())
		r.writeMu.Unlock()
		switch {
		case err != nil:
			writeError(w, err)
		case url == "":
			h.ServeHTTP(w, req)
		case req.Header.Get(forwardedHeader) != "":
			writeError(w, errorf(codeForwardingError, "this registry is not the writer (the writer is %s)", url))
		default:
			r.forward(w, req, url)
		}
	})
}

// forward relays req to the writer and its answer back. After a
// successful write it waits (within the request's time) until this
// registry has read `_schemas` as far as the writer wrote, so the client
// reads its own write here next.
func (r *Registry) forward(w http.ResponseWriter, req *http.Request, writer string) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody))
	if err != nil {
		writeError(w, errorf(codeUnprocessable, "reading the request: %v", err))
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), forwardTimeout)
	defer cancel()
	out, err := http.NewRequestWithContext(ctx, req.Method, writer+req.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		writeError(w, errorf(codeForwardingError, "forwarding to %s: %v", writer, err))
		return
	}
	for _, h := range []string{"Content-Type", "Accept", "Authorization"} {
		if v := req.Header.Get(h); v != "" {
			out.Header.Set(h, v)
		}
	}
	out.Header.Set(forwardedHeader, "1")
	resp, err := http.DefaultClient.Do(out)
	if err != nil {
		writeError(w, errorf(codeForwardingError, "Error while forwarding the request to the writer %s: %v", writer, err))
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		writeError(w, errorf(codeForwardingError, "reading the writer's answer: %v", err))
		return
	}
	if c, ok := r.log.(catchingUp); ok && resp.StatusCode/100 == 2 {
		if err := c.CatchUp(ctx); err != nil {
			writeError(w, errorf(codeTimeout, "the write succeeded on %s but this registry has not read it yet: %v", writer, err))
			return
		}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// catchingUp is a Log that can wait until it has read everything
// written so far (KafkaLog).
type catchingUp interface {
	CatchUp(ctx context.Context) error
}
