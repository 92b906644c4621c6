package restproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error is a failed request in Confluent's REST Proxy terms: the code
// (an HTTP status, or a status followed by two digits, e.g. 40403) and a
// message.
type Error struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Confluent's REST Proxy codes.
const (
	codeTopicNotFound      = 40401
	codePartitionNotFound  = 40402
	codeConsumerNotFound   = 40403
	codeConsumerExists     = 40902
	codeTopicExists        = 40002
	codeUnprocessable      = 42201
	codeInvalidFormat      = 40601 // Accept does not match the consumer's format
	codeKafkaError         = 50002
	codeBadRequest         = 400
	codeNotFound           = 404
	v3ContentType          = "application/json"
	v2ContentType          = "application/vnd.kafka.v2+json"
	unknownTopicPartMesage = "This server does not host this topic-partition."
)

func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func status(code int) int {
	for code >= 1000 {
		code /= 10
	}
	if http.StatusText(code) == "" {
		return http.StatusInternalServerError
	}
	return code
}

func writeJSON(w http.ResponseWriter, contentType string, code int, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

// writeError answers err in Confluent's body; an error that is not an
// *Error is the broker's (50002).
func writeError(w http.ResponseWriter, contentType string, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = errorf(codeKafkaError, "%v", err)
	}
	writeJSON(w, contentType, status(e.Code), e)
}

func decodeBody(r *http.Request, into any) error {
	if r.ContentLength == 0 {
		return nil
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody)).Decode(into); err != nil {
		return errorf(codeUnprocessable, "Unrecognized request body: %v", err)
	}
	return nil
}

// maxBody bounds a request body.
const maxBody = 64 << 20
