//go:build !linux

package netloop

import (
	"errors"
	"syscall"
)

var errSendfileUnsupported = errors.New("netloop: sendfile unsupported on this platform")

// sendfile is Linux-only here; other platforms always copy.
func sendfile(syscall.RawConn, int, int64, int64) (int64, error) {
	return 0, errSendfileUnsupported
}
