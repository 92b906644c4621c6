package procstat

import (
	"net"
	"os"
	"testing"
)

func TestReadSelf(t *testing.T) {
	// Burn a little CPU so the reading cannot be zero by accident of
	// rounding.
	x := 0
	for i := range 50_000_000 {
		x ^= i
	}
	_ = x
	u, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPUSeconds <= 0 || u.RSSBytes <= 0 || u.PeakRSS < u.RSSBytes {
		t.Fatalf("implausible usage %+v", u)
	}
}

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
