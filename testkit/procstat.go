package testkit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcMemory is a process's resident memory as the kernel reports it in
// /proc/PID/status.
type ProcMemory struct {
	RSS  int64 // VmRSS: resident set size now, in bytes
	Peak int64 // VmHWM: the highest resident set size so far, in bytes
}

// clockTicksPerSecond is USER_HZ, the unit of utime and stime in
// /proc/PID/stat. It is 100 on every Linux architecture Go supports; Go
// cannot ask sysconf(_SC_CLK_TCK) without cgo.
const clockTicksPerSecond = 100

// ReadProcMemory reads VmRSS and VmHWM of process pid (Linux only).
func ReadProcMemory(pid int) (ProcMemory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcMemory{}, fmt.Errorf("testkit: %w", err)
	}
	return parseProcStatus(data)
}

// ReadProcCPU reads the CPU time (user plus system) that process pid has
// used so far (Linux only), at the kernel's 10 ms resolution.
func ReadProcCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("testkit: %w", err)
	}
	return parseProcStat(data)
}

func parseProcStatus(data []byte) (ProcMemory, error) {
	var m ProcMemory
	var haveRSS, haveHWM bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "VmRSS":
			dst, haveRSS = &m.RSS, true
		case "VmHWM":
			dst, haveHWM = &m.Peak, true
		default:
			continue
		}
		n, err := parseKB(value)
		if err != nil {
			return ProcMemory{}, fmt.Errorf("testkit: /proc status %s: %w", key, err)
		}
		*dst = n
	}
	if !haveRSS || !haveHWM {
		return ProcMemory{}, errors.New("testkit: /proc status has no VmRSS/VmHWM (process exited?)")
	}
	return m, nil
}

// parseKB parses "   1234 kB" into bytes.
func parseKB(s string) (int64, error) {
	fields := strings.Fields(s)
	if len(fields) != 2 || fields[1] != "kB" {
		return 0, fmt.Errorf("unexpected value %q", s)
	}
	n, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return 0, err
	}
	return n * 1024, nil
}

// parseProcStat extracts utime+stime from a /proc/PID/stat line. The
// command name (field 2) is in parentheses and may itself contain spaces
// and parentheses, so fields are counted from the last ')'.
func parseProcStat(data []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, errors.New("testkit: /proc stat: no command name")
	}
	// After ')' come fields 3 (state) onwards; utime and stime are fields
	// 14 and 15, so indexes 11 and 12 here.
	fields := strings.Fields(string(data[end+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("testkit: /proc stat: %d fields after the command name", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("testkit: /proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicksPerSecond, nil
}
