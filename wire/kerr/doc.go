// Package kerr is the broker's vocabulary of Kafka error codes.
//
// A Code is the int16 a response carries in its ErrorCode fields. Each
// known code has its protocol name (String), whether Kafka clients retry
// it (Retriable) and a default message for the ErrorMessage fields of the
// APIs that have one (Message).
//
// Policy: clients only ever see Kafka codes and messages. Go errors stay
// inside the broker; a handler turns them into a Code with CodeOf, which
// finds a Code wrapped anywhere in an error chain (Code implements error so
// actors may return it directly or wrap it with fmt.Errorf("...: %w", code))
// and falls back to UnknownServerError for anything else. The default
// message never includes Go error text; a handler that has a message a user
// can act on (for example which config value is invalid) writes its own.
//
// Threading: constants and an immutable table; safe for concurrent use.
//
// Imports: the standard library only (wire's rule: no project package).
package kerr
