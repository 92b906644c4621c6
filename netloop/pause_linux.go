//go:build linux

package netloop

import (
	"reflect"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// gnet always reads a readable socket: it has no API to stop reading one
// connection. Without that, a client that keeps sending while the broker
// holds its requests back would grow gnet's inbound buffer without bound.
// So netloop pauses reading itself, at the kernel: it changes the
// socket's registration in the loop's epoll set from gnet's
// EPOLLIN|EPOLLPRI (level-triggered) to EPOLLRDHUP only, and back. While
// paused, the kernel's receive window fills and TCP pushes back on the
// client; a peer hang-up still reaches gnet (EPOLLRDHUP/EPOLLHUP without
// EPOLLIN makes gnet close the connection).
//
// gnet does not expose the loop's epoll descriptor, so it is read by
// reflection from gnet v2.9.7's unexported fields conn.loop.poller.fd.
// Reading an unexported int through reflect is allowed (only setting it
// is not). If a future gnet renames those fields, epollFD reports false,
// the server logs it once and falls back to a hard cap on buffered input
// (see conn.go); TestBackpressureClientNeverReads catches the change.

// gnetReadEvents is what gnet v2.9.7 registers for a connection in
// level-triggered mode (netpoll.ReadEvents).
const gnetReadEvents = unix.EPOLLIN | unix.EPOLLPRI

// epollFD returns the epoll descriptor of the loop that owns gc.
func epollFD(gc gnet.Conn) (int, bool) {
	v := reflect.ValueOf(gc)
	field := func(v reflect.Value, name string) reflect.Value {
		if v.Kind() != reflect.Pointer || v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
		if v.Kind() != reflect.Struct {
			return reflect.Value{}
		}
		return v.FieldByName(name)
	}
	fd := field(field(field(v, "loop"), "poller"), "fd")
	if !fd.IsValid() || !fd.CanInt() {
		return 0, false
	}
	return int(fd.Int()), true
}

// setReading switches reading of socket fd on or off in epoll set epfd.
// It must run on the loop that owns the connection.
func setReading(epfd, fd int, on bool) error {
	ev := unix.EpollEvent{Fd: int32(fd), Events: unix.EPOLLRDHUP}
	if on {
		ev.Events = gnetReadEvents
	}
	return unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, fd, &ev)
}
