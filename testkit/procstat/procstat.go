package procstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// Usage is a process's resource use at one moment.
type Usage struct {
	CPUSeconds float64 // user + system time since the process started
	RSSBytes   int64   // resident set size now (VmRSS)
	PeakRSS    int64   // peak resident set size (VmHWM)
}

// Read returns the usage of process pid.
func Read(pid int) (Usage, error) {
	var u Usage
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name (field 2) may hold spaces; fields after it start
	// after the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return u, errors.New("procstat: malformed /proc stat line")
	}
	fields := strings.Fields(string(stat[i+1:]))
	// After ')': state is field 3, utime field 14, stime field 15.
	if len(fields) < 13 {
		return u, errors.New("procstat: short /proc stat line")
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return u, fmt.Errorf("procstat: %w", err)
	}
	u.CPUSeconds = float64(utime+stime) / clockTicks

	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			u.RSSBytes = parseKB(line)
		case strings.HasPrefix(line, "VmHWM:"):
			u.PeakRSS = parseKB(line)
		}
	}
	return u, sc.Err()
}

func parseKB(line string) int64 {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * 1024
}

// ListenerPID returns the pid of the local process listening on TCP port
// port (IPv4 or IPv6), found through /proc/net/tcp{,6} and the processes'
// open sockets. It needs permission to read other processes' fds (same
// user or root).
func ListenerPID(port int) (int, error) {
	inodes := map[string]bool{}
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A = TCP_LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(f[1], ":")
			if !ok {
				continue
			}
			p, err := strconv.ParseInt(hexPort, 16, 32)
			if err == nil && int(p) == port {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("procstat: nothing listens on port %d", port)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		target, err := os.Readlink(fd)
		if err != nil || !inodes[target] {
			continue
		}
		pid, err := strconv.Atoi(strings.Split(fd, "/")[2])
		if err == nil {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("procstat: the process listening on port %d is not visible", port)
}
