package quota

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// entityStore is /config in memory, keyed by "<type>/<name>", counting
// the change notifications written.
type entityStore struct {
	nodes   map[string]map[string]string
	changes []string
}

func (s *entityStore) EntityConfig(typ, name string) (map[string]string, error) {
	return maps.Clone(s.nodes[typ+"/"+name]), nil
}

// EntitiesWithConfig lists the children of /config/<dir>: the first
// path element below it.
func (s *entityStore) EntitiesWithConfig(dir string) ([]string, error) {
	var out []string
	for p := range s.nodes {
		if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
			if c, _, _ := strings.Cut(rest, "/"); !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func (s *entityStore) SetEntityConfig(typ, name string, cfg map[string]string) error {
	s.nodes[typ+"/"+name] = maps.Clone(cfg)
	s.changes = append(s.changes, typ+"/"+name)
	return nil
}

// Each entity's znode path is Kafka's: sanitized names, <default> as
// written, user and client under the user; the path reads back as the
// entity.
func TestZooKeeperPaths(t *testing.T) {
	cases := []struct {
		e         Entity
		typ, name string
	}{
		{Entity{User: Named("alice")}, "users", "alice"},
		{Entity{User: Named("CN=a b,O=x")}, "users", "CN%3Da%20b%2CO%3Dx"},
		{Entity{User: Named("<default>")}, "users", "%3Cdefault%3E"},
		{Entity{User: DefaultPart()}, "users", "<default>"},
		{Entity{User: Named("alice"), Client: Named("app/1")}, "users", "alice/clients/app%2F1"},
		{Entity{User: DefaultPart(), Client: DefaultPart()}, "users", "<default>/clients/<default>"},
		{Entity{Client: Named("app")}, "clients", "app"},
		{Entity{Client: DefaultPart()}, "clients", "<default>"},
		{Entity{IP: Named("10.0.0.1")}, "ips", "10.0.0.1"},
		{Entity{IP: Named("::1")}, "ips", "%3A%3A1"},
		{Entity{IP: DefaultPart()}, "ips", "<default>"},
	}
	for _, c := range cases {
		typ, name := c.e.ZKPath()
		if typ != c.typ || name != c.name {
			t.Errorf("%s: path %s/%s, want %s/%s", c.e, typ, name, c.typ, c.name)
		}
		back, ok := EntityAt(typ, name)
		if !ok || back != c.e {
			t.Errorf("%s/%s reads back as %s (%v)", typ, name, back, ok)
		}
	}
	for _, bad := range [][2]string{{"topics", "t"}, {"users", "alice/clients"}, {"users", "alice/groups/g"}, {"clients", "a/b"}, {"users", ""}} {
		if e, ok := EntityAt(bad[0], bad[1]); ok {
			t.Errorf("%s/%s reads as quota entity %s", bad[0], bad[1], e)
		}
	}
}

// Values are written as Kafka's ZkAdminManager writes them: LONG and
// INT keys as whole numbers, DOUBLE keys as Java's Double.toString.
func TestZooKeeperValues(t *testing.T) {
	cases := []struct {
		key  string
		v    float64
		want string
	}{
		{KeyProducerByteRate, 1024, "1024"},
		{KeyConsumerByteRate, 1e12, "1000000000000"},
		{KeyConnectionCreationRate, 5, "5"},
		{KeyRequestPercentage, 200, "200.0"},
		{KeyRequestPercentage, 12.5, "12.5"},
		{KeyControllerMutationRate, 0, "0.0"},
		{KeyControllerMutationRate, 0.001, "0.001"},
		{KeyControllerMutationRate, 0.00015, "1.5E-4"},
		{KeyRequestPercentage, 1e7, "1.0E7"},
		{KeyRequestPercentage, 12345678.9, "1.23456789E7"},
	}
	for _, c := range cases {
		if got := formatValue(c.key, c.v); got != c.want {
			t.Errorf("%s=%v: %q, want %q", c.key, c.v, got, c.want)
		}
	}
}

// Altering a user's quotas keeps the SCRAM credentials in its znode,
// writes a notification per changed entity, starts from the znode (not
// from what the broker held) and leaves an emptied entity's znode with
// its other keys.
func TestZooKeeperPersistKeepsOtherKeys(t *testing.T) {
	scram := "salt=c2FsdA==,stored_key=a2V5,server_key=c2Vydg==,iterations=4096"
	s := &entityStore{nodes: map[string]map[string]string{
		"users/alice": {"SCRAM-SHA-256": scram, KeyConsumerByteRate: "2048"},
	}}
	m := NewManager(nil, ZooKeeperPersist(s), Window{Num: 11, Size: 1e9}, nil)
	m.ReadThrough(ZooKeeperRead(s), ZooKeeperReadAll(s))

	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{
		alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 1024, false), op(KeyRequestPercentage, 50, false)}, comp(TypeUser, kmsg.StringPtr("alice"))),
		alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyConnectionCreationRate, 3, false)}, comp(TypeIP, nil)),
	}
	resp, err := m.Alter(req)
	if err != nil || resp.Entries[0].ErrorCode != 0 || resp.Entries[1].ErrorCode != 0 {
		t.Fatalf("alter: %v %+v", err, resp.Entries)
	}
	want := map[string]string{"SCRAM-SHA-256": scram, KeyConsumerByteRate: "2048", KeyProducerByteRate: "1024", KeyRequestPercentage: "50.0"}
	if got := s.nodes["users/alice"]; !maps.Equal(got, want) {
		t.Errorf("users/alice = %v, want %v", got, want)
	}
	if got := s.nodes["ips/<default>"]; !maps.Equal(got, map[string]string{KeyConnectionCreationRate: "3"}) {
		t.Errorf("ips/<default> = %v", got)
	}
	if len(s.changes) != 2 {
		t.Errorf("notifications %v, want one per entity", s.changes)
	}
	held := m.Snapshot()[Entity{User: Named("alice")}]
	if !maps.Equal(held, map[string]float64{KeyConsumerByteRate: 2048, KeyProducerByteRate: 1024, KeyRequestPercentage: 50}) {
		t.Errorf("held %v: the znode's consumer_byte_rate is not kept", held)
	}

	req.Entries = []kmsg.AlterClientQuotasRequestEntry{alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{
		op(KeyProducerByteRate, 0, true), op(KeyRequestPercentage, 0, true), op(KeyConsumerByteRate, 0, true),
	}, comp(TypeUser, kmsg.StringPtr("alice")))}
	if _, err := m.Alter(req); err != nil {
		t.Fatal(err)
	}
	if got := s.nodes["users/alice"]; !maps.Equal(got, map[string]string{"SCRAM-SHA-256": scram}) {
		t.Errorf("users/alice after removing its quotas = %v", got)
	}
	if _, ok := m.Snapshot()[Entity{User: Named("alice")}]; ok {
		t.Error("alice still has quotas")
	}
}

// A watch's reading of an entity: non-quota keys are ignored, bad values
// reported.
func TestQuotasOf(t *testing.T) {
	q, bad := QuotasOf(Entity{User: Named("alice")}, map[string]string{
		"SCRAM-SHA-512": "x", KeyProducerByteRate: "1024", KeyRequestPercentage: "1.5E1", KeyConsumerByteRate: "lots", KeyConnectionCreationRate: "3",
	})
	if !maps.Equal(q, map[string]float64{KeyProducerByteRate: 1024, KeyRequestPercentage: 15}) || len(bad) != 1 || bad[0] != KeyConsumerByteRate {
		t.Errorf("quotas %v, bad %v", q, bad)
	}
	q, _ = QuotasOf(Entity{IP: DefaultPart()}, map[string]string{KeyConnectionCreationRate: "3", KeyProducerByteRate: "1"})
	if !maps.Equal(q, map[string]float64{KeyConnectionCreationRate: 3}) {
		t.Errorf("ip quotas %v", q)
	}
}

// A description in a cluster reads every quota entity from ZooKeeper:
// users, each user's clients, clients, ips; znodes without quotas (a
// SCRAM-only user, a parent) are not entities.
func TestZooKeeperReadAll(t *testing.T) {
	s := &entityStore{nodes: map[string]map[string]string{
		"users/alice":                         {"SCRAM-SHA-256": "x", KeyProducerByteRate: "10"},
		"users/bob":                           {"SCRAM-SHA-256": "y"},
		"users/%3Cdefault%3E/clients/app%2F1": {KeyRequestPercentage: "12.5"},
		"users/<default>/clients/<default>":   {KeyConsumerByteRate: "20"},
		"clients/app":                         {KeyProducerByteRate: "30"},
		"ips/10.0.0.1":                        {KeyConnectionCreationRate: "3"},
		"topics/t":                            {"retention.ms": "1"},
	}}
	got, err := ZooKeeperReadAll(s)()
	if err != nil {
		t.Fatal(err)
	}
	want := Configs{
		{User: Named("alice")}:                             {KeyProducerByteRate: 10},
		{User: Named("<default>"), Client: Named("app/1")}: {KeyRequestPercentage: 12.5},
		{User: DefaultPart(), Client: DefaultPart()}:       {KeyConsumerByteRate: 20},
		{Client: Named("app")}:                             {KeyProducerByteRate: 30},
		{IP: Named("10.0.0.1")}:                            {KeyConnectionCreationRate: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	for e, cfg := range want {
		if !maps.Equal(got[e], cfg) {
			t.Errorf("%s: %v, want %v", e, got[e], cfg)
		}
	}
}
