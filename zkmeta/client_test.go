package zkmeta_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/samsa-io/samsa/zkmeta"
)

func TestConnectCreatesChroot(t *testing.T) {
	addr := zkAddr(t)
	root := chroot(t) + "/deeper/kafka"
	c := connect(t, addr, root+"/") // a trailing '/' is no part of the chroot
	if c.Chroot() != root {
		t.Fatalf("Chroot() = %q, want %q", c.Chroot(), root)
	}
	if ok, _, err := c.Conn().Exists(root); err != nil || !ok {
		t.Fatalf("chroot %s not created: %v %v", root, ok, err)
	}
	if c.SessionID() == 0 {
		t.Error("SessionID() = 0 with a session")
	}
	if ev := nextEvent(t, c, 10*time.Second); ev != zkmeta.Connected {
		t.Errorf("first event %v, want Connected", ev)
	}
	// A second client on the same chroot finds it there.
	connect(t, addr, root)
}

func TestParseConnect(t *testing.T) {
	for _, tc := range []struct {
		in      string
		servers []string
		root    string
	}{
		{"h1:2181", []string{"h1:2181"}, ""},
		{"h1:2181,h2:2182/kafka", []string{"h1:2181", "h2:2182"}, "/kafka"},
		{"h1:2181/a/b/", []string{"h1:2181"}, "/a/b"},
		{"h1:2181/", []string{"h1:2181"}, ""},
	} {
		s, r, err := zkmeta.ParseConnect(tc.in)
		if err != nil || fmt.Sprint(s) != fmt.Sprint(tc.servers) || r != tc.root {
			t.Errorf("ParseConnect(%q) = %v %q %v", tc.in, s, r, err)
		}
	}
	if _, _, err := zkmeta.ParseConnect("/kafka"); err == nil {
		t.Error("no server: no error")
	}
}

func TestEnsurePersistentPaths(t *testing.T) {
	c := newClient(t)
	for range 2 { // idempotent
		if err := c.EnsurePersistentPaths(); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range append(zkmeta.PersistentPaths, "/config/topics", "/config/ips", "/brokers/seqid") {
		if !exists(t, c, p) {
			t.Errorf("%s missing", p)
		}
	}
}

func TestClusterIDGetOrCreateConcurrent(t *testing.T) {
	addr, root := zkAddr(t), chroot(t)
	const n = 6
	clients := make([]*zkmeta.Client, n)
	for i := range clients {
		clients[i] = connect(t, addr, root)
	}
	ids := make([]string, n)
	errs := make([]error, n)
	together(n, func(i int) {
		ids[i], errs[i] = clients[i].GetOrCreateClusterID(func() string { return fmt.Sprintf("proposed-%d", i) })
	})
	for i := range ids {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("clients disagree on the cluster id: %q", ids)
		}
	}
	data, _ := raw(t, clients[0], zkmeta.PathClusterID)
	if want := zkmeta.EncodeClusterID(ids[0]); !bytes.Equal(data, want) {
		t.Errorf("/cluster/id = %s, want %s", data, want)
	}
	// Later calls read it and never call newID.
	id, err := clients[1].GetOrCreateClusterID(func() string { t.Error("newID called with an id present"); return "x" })
	if err != nil || id != ids[0] {
		t.Errorf("second GetOrCreateClusterID = %q, %v", id, err)
	}
	if len(zkmeta.NewTopicID().String()) != 22 {
		t.Error("a Kafka-style id is 22 characters")
	}
}

func TestGenerateBrokerID(t *testing.T) {
	c := newClient(t)
	for want := int32(1001); want <= 1003; want++ {
		id, err := c.GenerateBrokerID(1000)
		if err != nil || id != want {
			t.Fatalf("GenerateBrokerID = %d, %v; want %d", id, err, want)
		}
	}
}

func TestEnsureFeatures(t *testing.T) {
	c := newClient(t)
	v, err := c.EnsureFeatures()
	if err != nil || v != 0 {
		t.Fatalf("EnsureFeatures = %d, %v", v, err)
	}
	data, _ := raw(t, c, zkmeta.PathFeature)
	if string(data) != `{"features":{},"version":2,"status":1}` {
		t.Errorf("/feature = %s", data)
	}
	// A disabled node is enabled, with no features.
	if _, err := c.Conn().Set(c.Chroot()+zkmeta.PathFeature, []byte(`{"features":{"x":{"min_version_level":1,"max_version_level":1}},"version":1,"status":0}`), -1); err != nil {
		t.Fatal(err)
	}
	if v, err = c.EnsureFeatures(); err != nil || v != 2 {
		t.Fatalf("EnsureFeatures on a disabled node = %d, %v", v, err)
	}
	if data, _ = raw(t, c, zkmeta.PathFeature); string(data) != `{"features":{},"version":2,"status":1}` {
		t.Errorf("/feature = %s", data)
	}
}

func TestCloseEndsEventsAndWatches(t *testing.T) {
	c := newClient(t)
	if err := c.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	_, changed, err := c.WatchTopics()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	fired(t, changed, "watch after Close")
	for range c.Events() { // drains, then ends
	}
	if _, err := c.Topics(); err == nil {
		t.Error("a call after Close succeeded")
	}
}
