package testkit

import (
	"io"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestZooKeeperServes(t *testing.T) {
	z := StartZooKeeper(t, ZooKeeperConfig{})
	status, err := z.Status()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "Mode: standalone") {
		t.Errorf("srvr = %q, want a standalone server", status)
	}

	conn, events, err := zk.Connect([]string{z.Addr()}, 2*time.Second,
		zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitForState(t, events, zk.StateHasSession)

	path, err := conn.Create("/samsa-testkit", []byte("hello"), 0, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := conn.Get(path)
	if err != nil || string(data) != "hello" {
		t.Fatalf("Get(%s) = %q, %v", path, data, err)
	}
	if _, err := conn.Create("/samsa-testkit", nil, 0, zk.WorldACL(zk.PermAll)); err != zk.ErrNodeExists {
		t.Errorf("second create: %v, want ErrNodeExists", err)
	}
}

func waitForState(t *testing.T, events <-chan zk.Event, want zk.State) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == want {
				return
			}
		case <-timeout:
			t.Fatalf("no %v event within 10s", want)
		}
	}
}
