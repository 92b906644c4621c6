package actors

import (
	"fmt"
	"log/slog"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/config"
)

// newAuthorizer loads the ACLs when authorizer.class.name turns
// authorization on (nil otherwise): from ZooKeeper in cluster mode, from
// the first data directory alone.
func newAuthorizer(cfg *config.Broker, logger *slog.Logger, o Options) (*acl.Authorizer, error) {
	if !config.AuthorizerEnabled(cfg) {
		return nil, nil
	}
	var store acl.Store
	if o.Cluster != nil && o.Cluster.ACLs != nil {
		store = o.Cluster.ACLs
	} else {
		store = acl.NewFileStore(o.FS, cfg.LogDirs[0])
	}
	rules := acl.Rules{SuperUsers: config.SuperUsers(cfg), AllowIfNoACL: config.ParseBool(cfg.Value(config.KeyAllowEveryoneACL))}
	a, err := acl.New(rules, store, logger, o.Now)
	if err != nil {
		return nil, fmt.Errorf("actors: loading the ACLs: %w", err)
	}
	logger.Info("authorizer on: requests are checked against ACLs", "acls", a.State().Len(),
		"super_users", len(rules.SuperUsers), "allow_everyone_if_no_acl_found", rules.AllowIfNoACL)
	return a, nil
}

// Authorizer is the broker's authorizer, nil when authorization is off.
func (b *Broker) Authorizer() *acl.Authorizer { return b.env.Auth }
