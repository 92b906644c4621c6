package bench

import "time"

// wallClock reads wall-clock time from the monotonic clock alone, anchored
// to one reading of both. time.Now reads both clocks on every call; the
// generator reads the time twice per record (its send time and its
// acknowledgement), and at millions of records a second the second clock
// read was a sixth of the generator's CPU, which on a shared machine is
// CPU the broker under test does not get. Within one run the drift
// between the two clocks is far below the latencies measured.
type wallClock struct{ anchor time.Time }

func newWallClock() wallClock { return wallClock{anchor: time.Now()} }

// now is the current time, with both a wall-clock and a monotonic
// reading, like time.Now.
func (c wallClock) now() time.Time { return c.anchor.Add(time.Since(c.anchor)) }
