package testkit

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that no outgoing connection will take: it lies below the kernel's
// ephemeral range (ip_local_port_range). A port from ":0" lies inside that
// range, so when a broker on it is killed, any client's next connect may be
// given the same number as its local port, and the restarted broker then
// fails to bind ("address already in use"). Ports are drawn at random so
// concurrent test processes rarely try the same one, and one process never
// hands out the same port twice.
func FreePort() (int, error) {
	low, high := portPickRange()
	if high > low {
		for range 200 {
			port := low + rand.IntN(high-low)
			if !claimPort(port) {
				continue
			}
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				continue // in use by somebody else; keep it claimed, try another
			}
			_ = l.Close()
			return port, nil
		}
	}
	// No room below the ephemeral range (or all of it taken): the
	// kernel's choice is still free now.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testkit: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// claimPort records port as handed out and reports whether it was not
// already.
func claimPort(port int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports[port] {
		return false
	}
	handedOut.ports[port] = true
	return true
}

// portPickRange is [low, high) for FreePort: from 10000 up to the start
// of the ephemeral range, which Linux reads from /proc (32768 by default).
func portPickRange() (low, high int) {
	const floor = 10000
	high = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				high = n
			}
		}
	}
	return floor, high
}
