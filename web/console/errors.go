package console

import (
	"context"
	"errors"
	"net/http"

	"github.com/twmb/franz-go/pkg/kerr"
)

// pageError is a failure shown to the user as a page: what happened and
// what to do about it.
type pageError struct {
	Status int
	Title  string
	Detail string
	Code   string // Kafka's error name, when the cluster refused
}

func (e *pageError) Error() string { return e.Title + ": " + e.Detail }

func badInput(detail string) *pageError {
	return &pageError{Status: http.StatusBadRequest, Title: "Bad input", Detail: detail}
}

// asPageError turns an error from the cluster into a page: Kafka's error
// code with its meaning, and a status that says whose fault it is.
func asPageError(err error) *pageError {
	var pe *pageError
	if errors.As(err, &pe) {
		return pe
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		status := http.StatusBadGateway
		switch {
		case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.GroupIDNotFound):
			status = http.StatusNotFound
		case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.GroupAuthorizationFailed),
			errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
			status = http.StatusForbidden
		case errors.Is(err, kerr.InvalidTopicException), errors.Is(err, kerr.InvalidPartitions),
			errors.Is(err, kerr.InvalidReplicationFactor), errors.Is(err, kerr.InvalidConfig),
			errors.Is(err, kerr.TopicAlreadyExists), errors.Is(err, kerr.PolicyViolation),
			errors.Is(err, kerr.InvalidRequest), errors.Is(err, kerr.NonEmptyGroup):
			status = http.StatusBadRequest
		}
		return &pageError{Status: status, Title: "The cluster refused", Code: ke.Message, Detail: ke.Description + " " + err.Error()}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &pageError{Status: http.StatusGatewayTimeout, Title: "The cluster did not answer in time",
			Detail: "No answer within the console's timeout: " + err.Error()}
	}
	return &pageError{Status: http.StatusBadGateway, Title: "The cluster could not be reached", Detail: err.Error()}
}

// fail renders err as the error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	pe := asPageError(err)
	if pe.Status >= 500 {
		c.opts.Logger.Warn("console request failed", "path", r.URL.Path, "err", err)
	}
	c.render(w, r, pe.Status, "error", view{Title: pe.Title, Data: pe})
}
