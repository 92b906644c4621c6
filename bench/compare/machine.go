package compare

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Machine is what the report says about where it ran.
type Machine struct {
	Hostname, Kernel, CPU string
	Cores                 int
	MemTotal              string
	LoadAtStart           string
	GoVersion, Java       string
	SamsaVersion          string
	KafkaVersion          string
}

// DescribeMachine reads /proc and asks java for its version.
func DescribeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
	m.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAtStart = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemTotal = strings.TrimSpace(strings.TrimPrefix(strings.Split(string(b), "\n")[0], "MemTotal:"))
	}
	if out, err := exec.Command("java", "-version").CombinedOutput(); err == nil {
		m.Java = strings.TrimSpace(strings.Split(string(out), "\n")[0])
	}
	return m
}

// LoadNow is the 1, 5 and 15 minute load average now.
func LoadNow() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
