package testkit

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// SharedBroker is one broker process that many tests of a package share,
// started by the first test that asks for it. Declare it as a package
// variable and let TestMain run the tests through it, so that it is
// stopped (and an unclean stop fails the package) at the end:
//
//	var shared = testkit.SharedBroker{Config: testkit.BrokerConfig{}}
//
//	func TestMain(m *testing.M) { os.Exit(shared.RunTests(m)) }
//
// Tests that kill or restart a broker start their own with StartBroker.
type SharedBroker struct {
	Config BrokerConfig

	once   sync.Once
	broker *BrokerProcess
	err    error
}

// Get returns the shared broker, starting it on first use, and attaches
// its output to t's log if t fails. It fails t when the broker cannot
// start or is no longer running.
func (s *SharedBroker) Get(t testing.TB) *BrokerProcess {
	t.Helper()
	s.once.Do(func() { s.broker, s.err = LaunchBroker(s.Config) })
	if s.err != nil {
		t.Fatalf("starting the shared broker: %v", s.err)
	}
	if !s.broker.Running() {
		t.Fatalf("the shared broker is not running (%s); output:\n%s", s.broker.ExitState(), LastLines(s.broker.Output(), 80))
	}
	s.broker.LogOnFailure(t)
	return s.broker
}

// Stop stops the shared broker with SIGTERM, if it was started, and
// removes its data; an unclean stop is an error carrying the end of the
// broker's output.
func (s *SharedBroker) Stop() error {
	b := s.broker
	if b == nil {
		return nil
	}
	defer b.Close()
	if err := b.Stop(); err != nil {
		return fmt.Errorf("shared broker did not stop cleanly: %w\noutput:\n%s", err, LastLines(b.Output(), 60))
	}
	return nil
}

// RunTests runs the package's tests, then stops the shared broker; it
// returns the exit code for os.Exit, 1 if the broker did not stop cleanly.
func (s *SharedBroker) RunTests(m *testing.M) int {
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		code = 1
	}
	return code
}

// LastLines returns the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
