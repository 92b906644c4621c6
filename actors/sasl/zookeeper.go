package sasl

import (
	"maps"
	"net/url"
	"strings"
)

// In a cluster the credentials live where Kafka's ZooKeeper mode keeps
// them: /config/users/<sanitized user> holds the user's dynamic configs
// ({"version":1,"config":{...}}), the SCRAM credential under the
// mechanism's name next to any quota the user has, and a change
// notification tells every broker to read it again.

// UsersEntity is ZooKeeper's config entity type of users.
const UsersEntity = "users"

// EntityStore is what the ZooKeeper persistence needs: Kafka's dynamic
// config entities (zkmeta's config store).
type EntityStore interface {
	EntityConfig(entityType, name string) (map[string]string, error)
	SetEntityConfig(entityType, name string, configs map[string]string) error
}

// ZooKeeperPersist writes each changed user's credentials into its
// /config/users znode, keeping the user's other configs (quotas), and
// announces the change.
func ZooKeeperPersist(zk EntityStore) Persist {
	return func(changed []string, all Users) error {
		for _, user := range changed {
			creds := map[string]string{}
			for m, c := range all[user] {
				creds[m] = c.String()
			}
			if err := UpdateEntity(zk, UsersEntity, SanitizeUser(user), ScramMechanisms, creds); err != nil {
				return err
			}
		}
		return nil
	}
}

// UpdateEntity rewrites /config/<entityType>/<name> with the keys owned
// set to values (those of owned not in values removed) and every other
// key kept as read: a user's SCRAM credentials and quotas share the
// znode, each written by its own API.
func UpdateEntity(zk EntityStore, entityType, name string, owned []string, values map[string]string) error {
	configs, err := zk.EntityConfig(entityType, name)
	if err != nil {
		return err
	}
	next := maps.Clone(configs)
	if next == nil {
		next = map[string]string{}
	}
	for _, k := range owned {
		delete(next, k)
	}
	maps.Copy(next, values)
	return zk.SetEntityConfig(entityType, name, next)
}

// UserCredentials picks the SCRAM credentials out of a user's configs as
// read from ZooKeeper; a malformed one is skipped and reported in bad.
func UserCredentials(configs map[string]string) (creds map[string]Credential, bad []string) {
	creds = map[string]Credential{}
	for _, m := range ScramMechanisms {
		text, ok := configs[m]
		if !ok {
			continue
		}
		c, err := ParseCredential(text)
		if err != nil {
			bad = append(bad, m)
			continue
		}
		creds[m] = c
	}
	return creds, bad
}

// SanitizeUser is Kafka's znode name for a user (Sanitizer.sanitize):
// the name URL-encoded as Java's URLEncoder does, with '*' and ' ' as
// %2A and %20, so any user name is one path element.
func SanitizeUser(user string) string {
	s := url.QueryEscape(user)
	// Go's QueryEscape differs from Java's URLEncoder on '~' (Java
	// encodes it) and already encodes '*'; '+' is the space.
	s = strings.ReplaceAll(s, "+", "%20")
	return strings.ReplaceAll(s, "~", "%7E")
}

// DesanitizeUser reverses SanitizeUser.
func DesanitizeUser(name string) string {
	u, err := url.PathUnescape(name)
	if err != nil {
		return name
	}
	return u
}
