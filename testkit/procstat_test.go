package testkit

import (
	"os"
	"testing"
	"time"
)

func TestParseProcStatus(t *testing.T) {
	status := "Name:\tsamsa\nVmPeak:\t  800000 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nThreads:\t9\n"
	m, err := parseProcStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS != 10240*1024 || m.Peak != 20480*1024 {
		t.Errorf("got %+v", m)
	}
	if _, err := parseProcStatus([]byte("Name:\tzombie\nState:\tZ (zombie)\n")); err == nil {
		t.Error("a status without VmRSS must be an error")
	}
	if _, err := parseProcStatus([]byte("VmRSS:\t12 MB\nVmHWM:\t1 kB\n")); err == nil {
		t.Error("a unit other than kB must be an error")
	}
}

func TestParseProcStat(t *testing.T) {
	// The command name holds a space and a ')', which must not shift fields.
	stat := "4242 (sam sa) x) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 125 0 0 20 0 9 0 100 0 0\n"
	d, err := parseProcStat([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3750 * time.Millisecond; d != want {
		t.Errorf("cpu = %v, want %v (250+125 ticks)", d, want)
	}
	if _, err := parseProcStat([]byte("1 (x) S 1 2")); err == nil {
		t.Error("a short stat line must be an error")
	}
}

func TestReadProcOfSelf(t *testing.T) {
	m, err := ReadProcMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS < 1<<20 {
		t.Errorf("this test binary's RSS is %d bytes; below 1 MiB is not plausible", m.RSS)
	}
	if _, err := ReadProcCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}
