package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// preciseSleep blocks the calling thread in nanosleep(2), which the
// kernel wakes by a high-resolution timer; the Go scheduler's own timers
// can wake a sleeper up to a millisecond late. Callers lock their
// goroutine to its thread (runtime.LockOSThread) so the wait does not
// hold up other goroutines.
func preciseSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for {
		var rem unix.Timespec
		if err := unix.Nanosleep(&ts, &rem); err != unix.EINTR {
			return
		}
		ts = rem
	}
}
