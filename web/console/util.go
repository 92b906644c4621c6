package console

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// contextUntil is the request's context, ending at deadline at the latest.
func contextUntil(r *http.Request, deadline time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(r.Context(), deadline)
}

// deadlineOf is when a request's Kafka work must be done.
func deadlineOf(r *http.Request, timeout time.Duration) time.Time {
	if d, ok := r.Context().Deadline(); ok {
		return d
	}
	return time.Now().Add(timeout)
}

// pathEscape makes a topic or group name one path segment.
func pathEscape(s string) string { return url.PathEscape(s) }
