//go:build !linux

package bench

import "time"

// preciseSleep is time.Sleep outside Linux.
func preciseSleep(d time.Duration) { time.Sleep(d) }
