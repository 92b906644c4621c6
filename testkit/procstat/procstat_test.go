package procstat

import (
	"net"
	"os"
	"testing"
	"time"
)

func TestReadSelf(t *testing.T) {
	// Burn CPU until the kernel's clock-tick accounting shows some: a
	// fixed loop could finish inside one tick, or be optimised away.
	var u Usage
	x := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		for i := range 1_000_000 {
			x ^= i
		}
		var err error
		if u, err = Read(os.Getpid()); err != nil {
			t.Fatal(err)
		}
		if u.CPUSeconds > 0 {
			break
		}
	}
	sink = x
	if u.CPUSeconds <= 0 || u.RSSBytes <= 0 || u.PeakRSS < u.RSSBytes {
		t.Fatalf("implausible usage %+v", u)
	}
}

// sink keeps the CPU-burning loop's result alive.
var sink int

func TestListenerPID(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pid, err := ListenerPID(ln.Addr().(*net.TCPAddr).Port)
	if err != nil {
		t.Fatal(err)
	}
	if pid != os.Getpid() {
		t.Fatalf("pid %d, want %d", pid, os.Getpid())
	}
	if _, err := ListenerPID(1); err == nil {
		t.Fatal("expected an error for a port nobody listens on")
	}
}
