package schemaregistry

import (
	"fmt"
	"net/http"
)

// Confluent's error codes, returned as {"error_code":..., "message":...}.
// The first three digits are the HTTP status.
const (
	codeSubjectNotFound           = 40401
	codeVersionNotFound           = 40402
	codeSchemaNotFound            = 40403
	codeSubjectSoftDeleted        = 40404
	codeSubjectNotSoftDeleted     = 40405
	codeVersionSoftDeleted        = 40406
	codeVersionNotSoftDeleted     = 40407
	codeSubjectConfigNotFound     = 40408
	codeSubjectModeNotFound       = 40409
	codeIncompatible              = 409
	codeInvalidSchema             = 42201
	codeInvalidVersion            = 42202
	codeInvalidCompatibilityLevel = 42203
	codeInvalidMode               = 42204
	codeOperationNotPermitted     = 42205
	codeReferenceExists           = 42206
	codeStoreError                = 50001
	codeTimeout                   = 50002
	codeForwardingError           = 50003
	codeBadRequest                = 400
	codeUnprocessable             = 422
)

// Error is a failed request in Confluent's terms: its code (e.g. 40401)
// and message; the HTTP status is derived from the code.
type Error struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (error code %d)", e.Message, e.Code) }

// Status is the HTTP status of the code: 40401 → 404, 409 → 409.
func (e *Error) Status() int {
	c := e.Code
	for c >= 1000 {
		c /= 10
	}
	if http.StatusText(c) == "" {
		return http.StatusInternalServerError
	}
	return c
}

func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func errSubjectNotFound(subject string) *Error {
	return errorf(codeSubjectNotFound, "Subject '%s' not found.", subject)
}

func errVersionNotFound(subject string, version int) *Error {
	return errorf(codeVersionNotFound, "Version %d not found for subject '%s'.", version, subject)
}

func errSchemaNotFound() *Error { return errorf(codeSchemaNotFound, "Schema not found") }
