package zkmeta

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// EncodeEntityConfig is ConfigEntityZNode.encode:
// {"version":1,"config":{"retention.ms":"1000"}}, the config in the order
// of a java.util.Properties filled in sorted key order.
func EncodeEntityConfig(cfg map[string]string) []byte {
	keys := slices.Sorted(maps.Keys(cfg))
	fields := make([]field, len(keys))
	for i, k := range keys {
		fields[i] = field{k, jStr(cfg[k])}
	}
	return object([]field{
		{"version", jInt(1)},
		{"config", object(orderFields(fields, propertiesOrder))},
	})
}

// DecodeEntityConfig is ConfigEntityZNode.decode: empty data or no
// "config" is an empty config.
func DecodeEntityConfig(data []byte) (map[string]string, error) {
	out := map[string]string{}
	if len(data) == 0 {
		return out, nil
	}
	var j struct {
		Config map[string]string `json:"config"`
	}
	if err := decodeJSON("entity config", data, &j); err != nil {
		return nil, err
	}
	for k, v := range j.Config {
		out[k] = v
	}
	return out, nil
}

// EncodeConfigChange is ConfigEntityChangeNotificationSequenceZNode.encode:
// {"version":2,"entity_path":"topics/<t>"}.
func EncodeConfigChange(entityPath string) []byte {
	return object([]field{{"version", jInt(2)}, {"entity_path", jStr(entityPath)}})
}

// DecodeConfigChange reads a change notification: version 2
// (entity_path "<type>/<name>", where a name may itself hold '/', as
// "users/<u>/clients/<c>") or version 1 (entity_type, entity_name).
func DecodeConfigChange(data []byte) (entityType, name string, err error) {
	var j struct {
		Version    int    `json:"version"`
		EntityPath string `json:"entity_path"`
		EntityType string `json:"entity_type"`
		EntityName string `json:"entity_name"`
	}
	if err := decodeJSON("config change", data, &j); err != nil {
		return "", "", err
	}
	switch j.Version {
	case 1:
		return j.EntityType, j.EntityName, nil
	case 2:
		t, n, ok := strings.Cut(j.EntityPath, "/")
		if !ok {
			return "", "", fmt.Errorf("zkmeta: config change: malformed entity_path %q", j.EntityPath)
		}
		return t, n, nil
	}
	return "", "", fmt.Errorf("zkmeta: config change: unsupported version %d: %q", j.Version, truncate(data))
}

// EntityConfig reads /config/<type>/<name>; an entity without one has an
// empty config.
func (c *Client) EntityConfig(entityType, name string) (map[string]string, error) {
	data, _, err := c.get(ConfigPath(entityType, name))
	if errors.Is(err, zk.ErrNoNode) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return DecodeEntityConfig(data)
}

// EntitiesWithConfig lists the names under /config/<type>, sorted.
func (c *Client) EntitiesWithConfig(entityType string) ([]string, error) {
	names, err := c.children(ConfigTypePath(entityType))
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	slices.Sort(names)
	return names, err
}

// SetEntityConfig is AdminZkClient.changeEntityConfig: it replaces
// /config/<type>/<name> with cfg (creating it), then writes the change
// notification /config/changes/config_change_<seq> that every broker
// watches.
func (c *Client) SetEntityConfig(entityType, name string, cfg map[string]string) error {
	if err := c.setOrCreateEntityConfig(entityType, name, cfg); err != nil {
		return err
	}
	return c.createConfigChange(entityType + "/" + name)
}

// setOrCreateEntityConfig is KafkaZkClient.setOrCreateEntityConfigs
// (without its check on /controller's version, which guards against a
// KRaft migration).
func (c *Client) setOrCreateEntityConfig(entityType, name string, cfg map[string]string) error {
	p := ConfigPath(entityType, name)
	data := EncodeEntityConfig(cfg)
	for {
		_, err := c.set(p, data, -1)
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		err = c.createRecursive(p, data, true)
		if !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
}

func (c *Client) createConfigChange(entityPath string) error {
	if err := c.createRecursive(PathConfigChanges, nil, false); err != nil {
		return err
	}
	_, err := c.create(configChangeCreatePath, EncodeConfigChange(entityPath), zk.FlagSequence)
	return err
}

// WatchConfigChanges lists the notifications under /config/changes
// (sorted, so oldest first) and arms a one-shot watch on the list.
func (c *Client) WatchConfigChanges() (seqNodes []string, changed <-chan struct{}, err error) {
	names, ch, err := c.childrenW(PathConfigChanges)
	if errors.Is(err, zk.ErrNoNode) {
		if err := c.createRecursive(PathConfigChanges, nil, false); err != nil {
			return nil, nil, err
		}
		names, ch, err = c.childrenW(PathConfigChanges)
	}
	if err != nil {
		return nil, nil, err
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, ConfigChangePrefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, ch, nil
}

// ConfigChange reads one notification (a name WatchConfigChanges
// listed): which entity's config changed.
func (c *Client) ConfigChange(node string) (entityType, name string, err error) {
	entityType, name, _, err = c.ConfigChangeCreated(node)
	return entityType, name, err
}

// ConfigChangeCreated is ConfigChange with the notification's creation
// time (its znode's ctime), by which brokers purge old notifications.
func (c *Client) ConfigChangeCreated(node string) (entityType, name string, created time.Time, err error) {
	data, st, err := c.get(PathConfigChanges + "/" + node)
	if err != nil {
		return "", "", time.Time{}, err
	}
	entityType, name, err = DecodeConfigChange(data)
	return entityType, name, time.UnixMilli(st.Ctime), err
}

// DeleteConfigChange removes a notification (Kafka purges those older
// than 15 minutes); a missing one is no error.
func (c *Client) DeleteConfigChange(node string) error {
	err := c.delete(PathConfigChanges+"/"+node, -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}
