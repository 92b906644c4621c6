package zkmeta_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/samsa-io/samsa/zkmeta"
)

func TestRegisterBroker(t *testing.T) {
	c := newClient(t)
	if err := c.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	ids, changed, err := c.WatchBrokerIDs()
	if err != nil || len(ids) != 0 {
		t.Fatalf("WatchBrokerIDs = %v, %v", ids, err)
	}
	ctx := context.Background()
	info := zkmeta.BrokerInfo{ID: 3, Endpoints: plaintext(9092), Rack: "r1", JMXPort: -1, Timestamp: 1700000000000}
	epoch, err := c.RegisterBroker(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	fired(t, changed, "broker ids after a registration")
	data, st := raw(t, c, zkmeta.BrokerPath(3))
	if st.Czxid != epoch || st.EphemeralOwner != c.SessionID() || st.Version != 1 {
		t.Errorf("znode stat %+v; epoch %d, session 0x%x", st, epoch, c.SessionID())
	}
	want := `{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://127.0.0.1:9092"],"rack":"r1","jmx_port":-1,"port":9092,"host":"127.0.0.1","version":5,"timestamp":"1700000000000"}`
	if string(data) != want {
		t.Errorf("registration\n got %s\nwant %s", data, want)
	}

	// Registering again in the same session is the same registration.
	again, err := c.RegisterBroker(ctx, info)
	if err != nil || again != epoch {
		t.Errorf("second RegisterBroker = %d, %v; want %d", again, err, epoch)
	}

	info2 := zkmeta.BrokerInfo{ID: 1, Endpoints: plaintext(9093), JMXPort: -1, Features: map[string]zkmeta.VersionRange{"metadata.version": {Min: 1, Max: 21}}}
	if _, err := c.RegisterBroker(ctx, info2); err != nil {
		t.Fatal(err)
	}
	brokers, err := c.Brokers()
	if err != nil {
		t.Fatal(err)
	}
	if len(brokers) != 2 || brokers[3].Epoch != epoch || brokers[3].Rack != "r1" || brokers[3].Endpoints[0] != info.Endpoints[0] ||
		brokers[1].Features["metadata.version"] != (zkmeta.VersionRange{Min: 1, Max: 21}) || brokers[1].Timestamp == 0 {
		t.Errorf("Brokers() = %+v", brokers)
	}
	ids, _, err = c.WatchBrokerIDs()
	if err != nil || len(ids) != 2 || ids[0] != 1 || ids[1] != 3 {
		t.Errorf("WatchBrokerIDs = %v, %v", ids, err)
	}
}

// A broker killed with SIGKILL and restarted within the session timeout
// finds its old registration still there, owned by the dead process's
// session: RegisterBroker waits until that session goes, then registers.
func TestRegisterBrokerWaitsForTheOldSession(t *testing.T) {
	addr, root := zkAddr(t), chroot(t)
	old := connect(t, addr, root)
	if err := old.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	info := zkmeta.BrokerInfo{ID: 7, Endpoints: plaintext(9092), JMXPort: -1}
	oldEpoch, err := old.RegisterBroker(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}

	waiting := newLogSignal("waiting for it to close or expire")
	restarted := connect(t, addr, root, func(c *zkmeta.Config) { c.Log = slog.New(waiting) })

	// Gives up when ctx ends.
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = restarted.RegisterBroker(short, info)
	cancel()
	<-waiting.ch // that call waited
	if !errors.Is(err, zkmeta.ErrNodeExists) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RegisterBroker with the old session alive = %v, want ErrNodeExists and the deadline", err)
	}

	type result struct {
		epoch int64
		err   error
	}
	done := make(chan result, 1)
	go func() {
		e, err := restarted.RegisterBroker(context.Background(), info)
		done <- result{e, err}
	}()
	select {
	case <-waiting.ch:
	case r := <-done:
		t.Fatalf("RegisterBroker returned %v while the old session was alive", r)
	}
	old.Close() // the old session ends; its ephemeral goes
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.epoch == oldEpoch {
		t.Error("the new registration has the old epoch")
	}
	_, st := raw(t, restarted, zkmeta.BrokerPath(7))
	if st.EphemeralOwner != restarted.SessionID() || st.Czxid != r.epoch {
		t.Errorf("owner 0x%x czxid %d; want session 0x%x epoch %d", st.EphemeralOwner, st.Czxid, restarted.SessionID(), r.epoch)
	}
}

func TestEndpointStrings(t *testing.T) {
	for _, tc := range []struct {
		e zkmeta.Endpoint
		s string
	}{
		{zkmeta.Endpoint{"PLAINTEXT", "h", 9092, "PLAINTEXT"}, "PLAINTEXT://h:9092"},
		{zkmeta.Endpoint{"SSL", "::1", 9093, "SSL"}, "SSL://[::1]:9093"},
		{zkmeta.Endpoint{"PLAINTEXT", "", 9092, "PLAINTEXT"}, "PLAINTEXT://:9092"},
	} {
		if got := tc.e.String(); got != tc.s {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.s)
		}
		back, err := zkmeta.ParseEndpoint(tc.s, map[string]string{tc.e.Listener: tc.e.SecurityProtocol})
		if err != nil || back != tc.e {
			t.Errorf("ParseEndpoint(%q) = %+v, %v", tc.s, back, err)
		}
	}
}

func TestDecodeOldBrokerVersions(t *testing.T) {
	v1 := `{"version":1,"host":"h","port":9092,"jmx_port":9999,"timestamp":"2233345666"}`
	b, err := zkmeta.DecodeBrokerInfo(1, []byte(v1))
	if err != nil || len(b.Endpoints) != 1 || b.Endpoints[0] != (zkmeta.Endpoint{"PLAINTEXT", "h", 9092, "PLAINTEXT"}) || b.JMXPort != 9999 {
		t.Errorf("v1: %+v, %v", b, err)
	}
	v3 := `{"version":3,"host":"h","port":9092,"jmx_port":-1,"timestamp":"1","endpoints":["PLAINTEXT://h:9092","SSL://h:9093"],"rack":"dc1"}`
	b, err = zkmeta.DecodeBrokerInfo(1, []byte(v3))
	if err != nil || len(b.Endpoints) != 2 || b.Endpoints[1].SecurityProtocol != "SSL" || b.Rack != "dc1" {
		t.Errorf("v3: %+v, %v", b, err)
	}
	// No PLAINTEXT endpoint: host null, port -1.
	enc := zkmeta.EncodeBrokerInfo(zkmeta.BrokerInfo{ID: 1, Endpoints: []zkmeta.Endpoint{{"SSL", "h", 9093, "SSL"}}, JMXPort: -1, Timestamp: 5})
	if want := `{"features":{},"listener_security_protocol_map":{"SSL":"SSL"},"endpoints":["SSL://h:9093"],"jmx_port":-1,"port":-1,"host":null,"version":5,"timestamp":"5"}`; string(enc) != want {
		t.Errorf("SSL only:\n got %s\nwant %s", enc, want)
	}
}
