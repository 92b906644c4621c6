package wiring

import (
	"math"

	"golang.org/x/sys/unix"
)

// Every connection holds a file descriptor (two while its writer runs,
// three while a write waits for room), and so do segment files, the
// listeners and the event loops. A broker at its descriptor limit keeps
// serving (netloop sheds new connections), but the connections it sheds
// get nothing; max.connections refuses them politely before that, and
// its default follows the limit.

// fdReserve is the number of descriptors max.connections' default leaves
// for everything but connections: segment files (the log's file cache
// keeps up to 1024 open), indexes of active segments, listeners, the
// event loops' pollers, logs. At most half the limit.
const fdReserve = 2048

// raiseFDLimit raises the soft RLIMIT_NOFILE to the hard limit (Go's
// runtime does so at start on Linux as well; this makes it explicit and
// holds on every platform) and returns the limits now in force.
func raiseFDLimit() (soft, hard uint64, err error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, err
	}
	if rl.Cur < rl.Max {
		want := rl
		want.Cur = want.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err == nil {
			rl = want
		}
	}
	return uint64(rl.Cur), uint64(rl.Max), nil
}

// defaultMaxConnections is max.connections when it is not set: two
// descriptors per connection in what fdReserve leaves of the soft limit,
// so that busy connections (whose writers hold a second one) and the
// logs' files fit together.
func defaultMaxConnections(nofile uint64) int {
	reserve := min(nofile/2, fdReserve)
	return int(max(1, min((nofile-reserve)/2, math.MaxInt32)))
}
