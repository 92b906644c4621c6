package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The memory a broker process may have, read from the two limits a
// deployment puts on it: a memory cgroup (containers, systemd's
// MemoryMax=) and RLIMIT_AS (ulimit -v, prlimit --as). The soft memory
// limit stays under both, so the collector works harder before the
// kernel's OOM killer or a failed mmap ends the broker.

// Shares of a limit the Go heap may take: the rest is for the binary's
// own pages, goroutine stacks, the runtime's metadata and, in a cgroup,
// the page cache the log's reads and writes leave charged to it.
const (
	cgroupShare       = 0.75
	addressSpaceShare = 0.75
)

// memoryCeiling is the most Go memory the soft limit may allow, given
// mapped bytes of Go memory now (runtime/metrics /memory/classes/total),
// or 0 when no limit applies. Read each time: a cgroup can be changed,
// or the process moved into one, while it runs.
func memoryCeiling(mapped int64) int64 {
	var ceiling int64
	if c := cgroupMemoryLimit(); c > 0 {
		ceiling = int64(float64(c) * cgroupShare)
	}
	if room := addressSpaceRoom(); room >= 0 {
		// What Go has mapped can be reused; what it maps next takes
		// address space, of which room is left.
		if c := mapped + int64(float64(room)*addressSpaceShare); ceiling == 0 || c < ceiling {
			ceiling = c
		}
	}
	return ceiling
}

// addressSpaceRoom is RLIMIT_AS minus the address space in use, or -1
// when there is no such limit or it cannot be read.
func addressSpaceRoom() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil || rl.Cur > 1<<62 { // RLIM_INFINITY is all ones
		return -1
	}
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	pages, err := strconv.ParseInt(string(bytes.Fields(statm)[0]), 10, 64)
	if err != nil {
		return -1
	}
	return max(int64(rl.Cur)-pages*int64(os.Getpagesize()), 0)
}

// cgroupMemoryLimit is the memory limit of this process's cgroup (v2's
// memory.max, or v1's memory.limit_in_bytes), or 0 when it has none.
func cgroupMemoryLimit() int64 {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			if n := readLimit(filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")); n > 0 {
				return n
			}
		case hasController(parts[1], "memory"):
			if n := readLimit(filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")); n > 0 {
				return n
			}
		}
	}
	return 0
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readLimit reads a cgroup limit file: a number of bytes, or "max" (v2)
// or a number near 2^63 (v1) for none, both 0 here.
func readLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n > 1<<60 {
		return 0
	}
	return n
}
