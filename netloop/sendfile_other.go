//go:build !linux

package netloop

import (
	"errors"
)

var errSendfileUnsupported = errors.New("netloop: sendfile unsupported on this platform")

// sendfile is Linux-only here; other platforms always copy.
func sendfile(*socket, int, int64, int64) (int64, error) {
	return 0, errSendfileUnsupported
}
