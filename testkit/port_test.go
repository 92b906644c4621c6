package testkit

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePortIsBelowTheEphemeralRangeAndNeverRepeats(t *testing.T) {
	low, high := portPickRange()
	seen := map[int]bool{}
	for range 50 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < low || port >= high {
			t.Fatalf("port %d outside [%d, %d): an outgoing connection could take it", port, low, high)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		_ = l.Close()
	}
}
