package zkmeta_test

import (
	"context"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit/faultproxy"
	"github.com/samsa-io/samsa/zkmeta"
)

// proxied connects a client through a fault proxy in front of the shared
// server.
func proxied(t *testing.T) (*zkmeta.Client, *faultproxy.Proxy) {
	t.Helper()
	p, err := faultproxy.New(zkAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	c := connect(t, p.Addr(), chroot(t))
	if ev := nextEvent(t, c, 10*time.Second); ev != zkmeta.Connected {
		t.Fatalf("first event %v, want Connected", ev)
	}
	return c, p
}

// The link drops and comes back within the session timeout: the same
// session, its ephemerals and its watches survive.
func TestReconnectKeepsTheSession(t *testing.T) {
	c, p := proxied(t)
	if err := c.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	epoch, err := c.RegisterBroker(context.Background(), zkmeta.BrokerInfo{ID: 1, Endpoints: plaintext(9092), JMXPort: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, changed, err := c.WatchBrokerIDs()
	if err != nil {
		t.Fatal(err)
	}
	session := c.SessionID()
	p.CutAll()
	if ev := nextEvent(t, c, 10*time.Second); ev != zkmeta.Disconnected {
		t.Fatalf("after a cut: %v, want Disconnected", ev)
	}
	if ev := nextEvent(t, c, 10*time.Second); ev != zkmeta.Reconnected {
		t.Fatalf("after the reconnect: %v, want Reconnected", ev)
	}
	if c.SessionID() != session {
		t.Errorf("session 0x%x became 0x%x", session, c.SessionID())
	}
	notFired(t, changed, "broker ids watch across a reconnect")
	if b, err := c.Broker(1); err != nil || b.Epoch != epoch {
		t.Errorf("registration after a reconnect: %+v, %v", b, err)
	}
	// The watch still works: it fires on the next change.
	if _, err := c.RegisterBroker(context.Background(), zkmeta.BrokerInfo{ID: 2, Endpoints: plaintext(9093), JMXPort: -1}); err != nil {
		t.Fatal(err)
	}
	fired(t, changed, "broker ids watch re-set after the reconnect")
}

// The link stays down past the session timeout: the server expires the
// session and deletes its ephemerals; when the link is back the client
// reports Expired, opens a new session by itself and reports NewSession;
// the old session's watches have fired, and the broker registers again
// with a new epoch.
func TestSessionExpiry(t *testing.T) {
	c, p := proxied(t)
	observer := newClient(t)
	if err := c.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	info := zkmeta.BrokerInfo{ID: 1, Endpoints: plaintext(9092), JMXPort: -1}
	oldEpoch, err := c.RegisterBroker(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}
	_, brokersChanged, err := c.WatchBrokerIDs()
	if err != nil {
		t.Fatal(err)
	}
	_, _, controllerChanged, err := c.WatchController()
	if err != nil {
		t.Fatal(err)
	}
	oldSession := c.SessionID()
	ok, _, gone, err := observer.Conn().ExistsW(observer.Chroot() + zkmeta.BrokerPath(1))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}

	p.SetDown(true)
	p.CutAll()
	if ev := nextEvent(t, c, 10*time.Second); ev != zkmeta.Disconnected {
		t.Fatalf("after the cut: %v, want Disconnected", ev)
	}
	// The server expires the session: its ephemeral goes.
	select {
	case <-gone:
	case <-time.After(30 * time.Second):
		t.Fatal("the registration outlived the session timeout")
	}
	p.SetDown(false)

	if ev := nextEvent(t, c, 20*time.Second); ev != zkmeta.Expired {
		t.Fatalf("after the link is back: %v, want Expired", ev)
	}
	if ev := nextEvent(t, c, 20*time.Second); ev != zkmeta.NewSession {
		t.Fatalf("after Expired: %v, want NewSession", ev)
	}
	fired(t, brokersChanged, "broker ids watch of the expired session")
	fired(t, controllerChanged, "controller watch of the expired session")
	if s := c.SessionID(); s == 0 || s == oldSession {
		t.Fatalf("session 0x%x after expiry of 0x%x", s, oldSession)
	}
	newEpoch, err := c.RegisterBroker(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}
	if newEpoch <= oldEpoch {
		t.Errorf("epoch %d after %d", newEpoch, oldEpoch)
	}
	_, st := raw(t, observer, zkmeta.BrokerPath(1))
	if st.EphemeralOwner != c.SessionID() {
		t.Errorf("owner 0x%x, want 0x%x", st.EphemeralOwner, c.SessionID())
	}
}
