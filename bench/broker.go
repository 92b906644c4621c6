package bench

import (
	"net"
	"strconv"

	"github.com/samsa-io/samsa/testkit/procstat"
)

// brokerProbe samples a local broker's resource use. It is inert when the
// broker is not a visible local process.
type brokerProbe struct {
	pid   int
	start procstat.Usage
}

// probeBroker finds the local process behind the first bootstrap address
// and takes a first sample.
func probeBroker(addr string) *brokerProbe {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return &brokerProbe{}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return &brokerProbe{}
	}
	port, _ := strconv.Atoi(portStr)
	pid, err := procstat.ListenerPID(port)
	if err != nil {
		return &brokerProbe{}
	}
	u, err := procstat.Read(pid)
	if err != nil {
		return &brokerProbe{}
	}
	return &brokerProbe{pid: pid, start: u}
}

// BrokerUsage is what a run cost the broker.
type BrokerUsage struct {
	PID        int     `json:"pid"`
	CPUSeconds float64 `json:"cpu_seconds"`
	RSSBytes   int64   `json:"rss_bytes"`
	PeakRSS    int64   `json:"peak_rss_bytes"`
}

// finish samples again and returns the difference in CPU and the memory
// figures, or nil when the broker could not be observed.
func (p *brokerProbe) finish() *BrokerUsage {
	if p.pid == 0 {
		return nil
	}
	u, err := procstat.Read(p.pid)
	if err != nil {
		return nil
	}
	return &BrokerUsage{PID: p.pid, CPUSeconds: u.CPUSeconds - p.start.CPUSeconds, RSSBytes: u.RSSBytes, PeakRSS: u.PeakRSS}
}
