package catalog

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeConfigs is /config and /config/changes in memory.
type fakeConfigs struct {
	mu       sync.Mutex
	entities map[string]map[string]string // "<type>/<name>"
	changes  map[string]string            // notification → entity path
	created  map[string]time.Time
	watch    chan struct{}
	deleted  chan string
}

func newFakeConfigs() *fakeConfigs {
	return &fakeConfigs{entities: map[string]map[string]string{}, changes: map[string]string{}, created: map[string]time.Time{},
		watch: make(chan struct{}), deleted: make(chan string, 16)}
}

// change sets an entity's config and writes its notification, firing
// the armed watch.
func (f *fakeConfigs) change(seq int, path string, cfg map[string]string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entities[path] = cfg
	node := fmt.Sprintf("config_change_%010d", seq)
	f.changes[node], f.created[node] = path, at
	close(f.watch)
	f.watch = make(chan struct{})
}

func (f *fakeConfigs) EntityConfig(typ, name string) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.entities[typ+"/"+name]), nil
}

func (f *fakeConfigs) SetEntityConfig(string, string, map[string]string) error { return nil }

func (f *fakeConfigs) EntitiesWithConfig(typ string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// The children of /config/<typ>: the first path element below it
	// (users/alice/clients/app makes users/alice a parent).
	var out []string
	for p := range f.entities {
		if rest, ok := strings.CutPrefix(p, typ+"/"); ok {
			n, _, _ := strings.Cut(rest, "/")
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

func cut(p string) (string, string, bool) {
	for i := range p {
		if p[i] == '/' {
			return p[:i], p[i+1:], true
		}
	}
	return p, "", false
}

func (f *fakeConfigs) ConfigChanges() ([]string, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.changes)), f.watch, nil
}

func (f *fakeConfigs) ConfigChange(node string) (string, string, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.changes[node]
	if !ok {
		return "", "", time.Time{}, nil
	}
	t, n, _ := cut(p)
	return t, n, f.created[node], nil
}

func (f *fakeConfigs) DeleteConfigChange(node string) error {
	f.mu.Lock()
	delete(f.changes, node)
	f.mu.Unlock()
	f.deleted <- node
	return nil
}

func describeMsg(m any) string {
	switch m := m.(type) {
	case *TopicConfigsChanged:
		return fmt.Sprintf("topic %s %v", m.Topic, m.Configs)
	case *BrokerConfigsChanged:
		return fmt.Sprintf("broker default=%v %v", m.ClusterDefault, m.Configs)
	}
	return fmt.Sprintf("%T", m)
}

// The watch reads every config at start, then each notification once,
// in order, skipping other brokers' and quota entities; it purges
// notifications older than 15 minutes, reads refreshed topics again, and
// stops with the actor.
func TestConfigWatchFollowsNotifications(t *testing.T) {
	now := time.Unix(10_000, 0)
	f := newFakeConfigs()
	f.change(0, "topics/a", map[string]string{"retention.ms": "1"}, now.Add(-20*time.Minute))
	f.change(1, "brokers/2", map[string]string{"log.cleaner.threads": "2"}, now.Add(-20*time.Minute))
	f.change(2, "users/alice", map[string]string{"producer_byte_rate": "1"}, now)
	f.change(3, "brokers/<default>", map[string]string{"log.segment.bytes": "2048"}, now)
	msgs := make(chan string, 64)
	stop := make(chan struct{})
	w := newConfigWatch(f, 1, func(m any) { msgs <- describeMsg(m) }, slog.New(slog.DiscardHandler), func() time.Time { return now }, stop)
	done := make(chan struct{})
	go func() { w.run(); close(done) }()
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			if got := <-msgs; got != w {
				t.Fatalf("got %q, want %q", got, w)
			}
		}
	}
	expect( // the start: everything
		"topic a map[retention.ms:1]",
		"broker default=true map[log.segment.bytes:2048]",
		"broker default=false map[]",
		// then the notifications: topics/a, brokers/<default>
		"topic a map[retention.ms:1]",
		"broker default=true map[log.segment.bytes:2048]")
	for _, want := range []string{"config_change_0000000000", "config_change_0000000001"} {
		if got := <-f.deleted; got != want {
			t.Fatalf("purged %s, want %s", got, want)
		}
	}
	f.change(4, "topics/b", map[string]string{"segment.bytes": "4096"}, now)
	expect("topic b map[segment.bytes:4096]")
	f.change(5, "brokers/1", map[string]string{"log.cleaner.threads": "3"}, now)
	expect("broker default=false map[log.cleaner.threads:3]")
	w.refresh([]string{"a"})
	expect("topic a map[retention.ms:1]")
	close(stop)
	<-done
	select {
	case m := <-msgs:
		t.Fatalf("unexpected %s", m)
	default:
	}
}

// Quota entities reach onQuotas, at start (every user, each user's
// clients, every client and ip) and on their notifications; only
// /config/users/<user> reaches onUsers too, and topics go on as before.
func TestConfigWatchQuotaEntities(t *testing.T) {
	now := time.Unix(10_000, 0)
	f := newFakeConfigs()
	f.change(0, "users/alice", map[string]string{"SCRAM-SHA-256": "x", "producer_byte_rate": "1024"}, now)
	f.change(1, "users/alice/clients/app", map[string]string{"consumer_byte_rate": "10"}, now)
	f.change(2, "users/<default>/clients/<default>", map[string]string{"request_percentage": "50.0"}, now)
	f.change(3, "clients/c", map[string]string{"producer_byte_rate": "1"}, now)
	f.change(4, "ips/<default>", map[string]string{"connection_creation_rate": "3"}, now)
	heard := make(chan string, 64)
	stop := make(chan struct{})
	defer close(stop)
	w := newConfigWatch(f, 1, func(any) {}, slog.New(slog.DiscardHandler), func() time.Time { return now }, stop)
	w.onUsers = func(user string, cfg map[string]string) { heard <- fmt.Sprintf("user %s %v", user, cfg) }
	w.onQuotas = func(typ, name string, cfg map[string]string) { heard <- fmt.Sprintf("quota %s/%s %v", typ, name, cfg) }
	go w.run()
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			if got := <-heard; got != w {
				t.Fatalf("got %q, want %q", got, w)
			}
		}
	}
	alice := "map[SCRAM-SHA-256:x producer_byte_rate:1024]"
	expect( // the start
		"user <default> map[]", "quota users/<default> map[]",
		"user alice "+alice, "quota users/alice "+alice,
		"quota users/<default>/clients/<default> map[request_percentage:50.0]",
		"quota users/alice/clients/app map[consumer_byte_rate:10]",
		"quota clients/c map[producer_byte_rate:1]",
		"quota ips/<default> map[connection_creation_rate:3]",
		// then the five notifications
		"user alice "+alice, "quota users/alice "+alice,
		"quota users/alice/clients/app map[consumer_byte_rate:10]",
		"quota users/<default>/clients/<default> map[request_percentage:50.0]",
		"quota clients/c map[producer_byte_rate:1]",
		"quota ips/<default> map[connection_creation_rate:3]")
	f.change(5, "users/alice/clients/app", map[string]string{}, now)
	expect("quota users/alice/clients/app map[]")
}
