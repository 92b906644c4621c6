// Package procstat reads a local process's resource use from /proc (Linux):
// CPU seconds, resident memory and its peak, and which process listens on a
// TCP port. Tests and the load generators use it to report a broker's cost
// next to its throughput.
package procstat
