package testkit

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fakeBrokerEnv turns this test binary into a stand-in for `samsa serve`
// (see fakeServe), so the process mechanics of BrokerProcess are tested
// without depending on the real broker.
const fakeBrokerEnv = "TESTKIT_FAKE_BROKER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeBrokerEnv); mode != "" {
		os.Exit(fakeServe(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeServe imitates the serve contract: parse --listeners and --log.dirs,
// listen, print the listening line, accept and close connections, exit on
// SIGTERM. mode picks a misbehaviour: "ok", "exit3" (exit 3 on SIGTERM),
// "die" (exit 1 before listening), "silent" (listen but never print).
func fakeServe(mode string, args []string) int {
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprintln(os.Stderr, "fake broker: want serve, got", args)
		return 2
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listeners := fs.String("listeners", "", "")
	dirs := fs.String("log.dirs", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if mode == "die" {
		fmt.Fprintln(os.Stderr, "fake broker: refusing to start")
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	hostPort := strings.TrimPrefix(*listeners, "PLAINTEXT://")
	l, err := net.Listen("tcp", hostPort)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake broker:", err)
		return 1
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	// Count starts in the data dir, so a restart test can see both runs.
	countFile := *dirs + "/starts"
	n, _ := os.ReadFile(countFile)
	starts, _ := strconv.Atoi(string(n))
	_ = os.WriteFile(countFile, []byte(strconv.Itoa(starts+1)), 0o644)
	if mode != "silent" {
		fmt.Fprintf(os.Stderr, "time=x level=INFO msg=\"samsa: listening on %s (PLAINTEXT), data in %s\"\n", l.Addr(), *dirs)
	}
	<-sigs
	l.Close()
	fmt.Fprintln(os.Stderr, "fake broker: stopped")
	if mode == "exit3" {
		return 3
	}
	return 0
}
