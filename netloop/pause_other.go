//go:build !linux

package netloop

import (
	"errors"

	"github.com/panjf2000/gnet/v2"
)

// Pausing reads is implemented for Linux's epoll only; elsewhere the
// server falls back to a hard cap on buffered input.
func epollFD(gnet.Conn) (int, bool) { return 0, false }

func setReading(int, int, bool) error { return errors.ErrUnsupported }
