package zkmeta_test

import (
	"slices"
	"testing"

	"github.com/samsa-io/samsa/zkmeta"
)

func TestEntityConfigAndChangeNotification(t *testing.T) {
	admin, broker := newClient(t), newClient(t)
	if err := admin.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	nodes, changed, err := broker.WatchConfigChanges()
	if err != nil || len(nodes) != 0 {
		t.Fatalf("WatchConfigChanges = %v, %v", nodes, err)
	}
	if cfg, err := broker.EntityConfig(zkmeta.ConfigTopics, "t"); err != nil || len(cfg) != 0 {
		t.Fatalf("config of an entity without one: %v, %v", cfg, err)
	}
	if err := admin.SetEntityConfig(zkmeta.ConfigTopics, "t", map[string]string{"segment.ms": "2000", "retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	fired(t, changed, "config change notification")
	nodes, changed, err = broker.WatchConfigChanges()
	if err != nil || !slices.Equal(nodes, []string{"config_change_0000000000"}) {
		t.Fatalf("WatchConfigChanges = %v, %v", nodes, err)
	}
	data, _ := raw(t, admin, zkmeta.PathConfigChanges+"/"+nodes[0])
	if string(data) != `{"version":2,"entity_path":"topics/t"}` {
		t.Errorf("notification %s", data)
	}
	typ, name, err := broker.ConfigChange(nodes[0])
	if err != nil || typ != zkmeta.ConfigTopics || name != "t" {
		t.Fatalf("ConfigChange = %q %q %v", typ, name, err)
	}
	data, _ = raw(t, admin, zkmeta.ConfigPath(zkmeta.ConfigTopics, "t"))
	if string(data) != `{"version":1,"config":{"retention.ms":"1000","segment.ms":"2000"}}` {
		t.Errorf("config znode %s", data)
	}

	// Replacing: the whole config is the new one.
	if err := admin.SetEntityConfig(zkmeta.ConfigTopics, "t", map[string]string{"retention.ms": "5"}); err != nil {
		t.Fatal(err)
	}
	fired(t, changed, "second notification")
	cfg, err := broker.EntityConfig(zkmeta.ConfigTopics, "t")
	if err != nil || len(cfg) != 1 || cfg["retention.ms"] != "5" {
		t.Fatalf("config after replacing: %v, %v", cfg, err)
	}
	// Brokers and users: a name may hold a '/'.
	if err := admin.SetEntityConfig(zkmeta.ConfigUsers, "alice/clients/app", map[string]string{"producer_byte_rate": "1024"}); err != nil {
		t.Fatal(err)
	}
	nodes, _, err = broker.WatchConfigChanges()
	if err != nil || len(nodes) != 3 {
		t.Fatalf("WatchConfigChanges = %v, %v", nodes, err)
	}
	if typ, name, err := broker.ConfigChange(nodes[2]); err != nil || typ != zkmeta.ConfigUsers || name != "alice/clients/app" {
		t.Errorf("ConfigChange = %q %q %v", typ, name, err)
	}
	if err := broker.DeleteConfigChange(nodes[0]); err != nil {
		t.Fatal(err)
	}
	if err := broker.DeleteConfigChange(nodes[0]); err != nil {
		t.Errorf("deleting a deleted notification: %v", err)
	}
	if names, err := broker.EntitiesWithConfig(zkmeta.ConfigTopics); err != nil || !slices.Equal(names, []string{"t"}) {
		t.Errorf("EntitiesWithConfig = %v, %v", names, err)
	}
	typ, name, err = zkmeta.DecodeConfigChange([]byte(`{"version":1,"entity_type":"topics","entity_name":"x"}`))
	if err != nil || typ != "topics" || name != "x" {
		t.Errorf("version 1 notification: %q %q %v", typ, name, err)
	}
}
