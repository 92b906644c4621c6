package wire

import (
	"errors"

	"github.com/samsa-io/samsa/wire/kerr"
)

// ErrorCodeOf maps an error from this package's batch, record and
// compression functions to the Kafka code a Produce response carries (the
// table in doc.go, "Error codes"). Anything else goes through kerr.CodeOf
// (a wrapped kerr.Code, else UNKNOWN_SERVER_ERROR); nil is NONE.
func ErrorCodeOf(err error) kerr.Code {
	switch {
	case err == nil:
		return kerr.None
	case errors.Is(err, ErrBatchMagic):
		return kerr.UnsupportedForMessageFormat
	case errors.Is(err, ErrBatchCodec), errors.Is(err, ErrCodecUnknown):
		return kerr.UnsupportedCompressionType
	case errors.Is(err, ErrBatchEmpty), errors.Is(err, ErrBatchRecordCount), errors.Is(err, ErrInvalidRecord):
		return kerr.InvalidRecord
	case errors.Is(err, ErrBatchTooShort), errors.Is(err, ErrBatchLength), errors.Is(err, ErrBatchCRC),
		errors.Is(err, ErrCorruptCompressed):
		return kerr.CorruptMessage
	case errors.Is(err, ErrDecompressLimit):
		return kerr.MessageTooLarge
	}
	return kerr.CodeOf(err)
}
