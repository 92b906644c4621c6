package catalog

import (
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Dynamic configs in cluster mode, as Kafka 3.9's ZooKeeper mode keeps
// them: ZooKeeper is the truth (/config/topics/<t>, /config/brokers/<id>,
// /config/brokers/<default>). The config APIs read and write it, off
// the actor, checking every change with metadata.AlterConfig, the same
// rules as a single broker; a write is followed by a change notification
// (/config/changes), and every broker's config watch
// (cluster_config_watch.go) brings the change to the replicas it holds
// and to its broker layers through the messages below. A broker thus
// sees its own change as every other does, after the notification, as
// in Kafka.

// ConfigStore is what the cluster-mode config path needs of ZooKeeper;
// entity types and names are ZooKeeper's ("topics", "brokers"; a broker
// id, or "<default>").
type ConfigStore interface {
	// EntityConfig reads /config/<type>/<name> (empty when none).
	EntityConfig(entityType, name string) (map[string]string, error)
	// SetEntityConfig replaces /config/<type>/<name> and writes a change
	// notification.
	SetEntityConfig(entityType, name string, configs map[string]string) error
	// EntitiesWithConfig lists the names under /config/<type>.
	EntitiesWithConfig(entityType string) ([]string, error)
	// ConfigChanges lists the notifications under /config/changes,
	// oldest first, and arms a watch that fires on the next change of the
	// list (or when the session ends).
	ConfigChanges() (nodes []string, changed <-chan struct{}, err error)
	// ConfigChange reads one notification: the entity whose config
	// changed and when the notification was made. A notification gone
	// meanwhile (another broker purged it) is entityType "" and no error.
	ConfigChange(node string) (entityType, name string, created time.Time, err error)
	// DeleteConfigChange removes a notification (none is no error).
	DeleteConfigChange(node string) error
}

// ZooKeeper's config entity types and the cluster-wide default's name
// (Kafka's ConfigType and ConfigEntityName.DEFAULT).
const (
	entityTopics  = "topics"
	entityBrokers = "brokers"
	entityUsers   = "users"
	entityClients = "clients"
	entityIPs     = "ips"
	defaultEntity = "<default>"
)

// Messages the config watch sends the metadata actor.
type (
	// TopicConfigsChanged is a topic's /config/topics znode as just
	// read: the replicas held here are reconfigured live.
	TopicConfigsChanged struct {
		Topic   string
		Configs map[string]string
	}
	// BrokerConfigsChanged is this broker's /config/brokers/<id> (or,
	// with ClusterDefault, /config/brokers/<default>) as just read: the
	// dynamic broker layer it is, and every held topic's defaults.
	BrokerConfigsChanged struct {
		ClusterDefault bool
		Configs        map[string]string
	}
)

func (a *metadataActor) topicConfigsChanged(m *TopicConfigsChanged) {
	if l := a.cfg.Throttles; l != nil {
		l.TopicConfigs(m.Topic, m.Configs)
	}
	eff, err := a.state.SetTopicConfigs(m.Topic, m.Configs)
	if err != nil {
		a.env.Log.Error("cannot persist a topic's new configs; its logs keep the old ones until the next change or restart", "topic", m.Topic, "err", err)
		return
	}
	if len(eff.Reconfigure) > 0 {
		a.env.Log.Info("topic configs changed in ZooKeeper; replicas here reconfigured", "topic", m.Topic)
	}
	a.apply(eff, nil)
}

func (a *metadataActor) brokerConfigsChanged(m *BrokerConfigsChanged) {
	if l := a.cfg.Throttles; l != nil {
		l.BrokerConfigs(m.ClusterDefault, m.Configs)
	}
	eff, err := a.state.SetBrokerConfigs(m.ClusterDefault, m.Configs)
	if err != nil {
		a.env.Log.Error("cannot persist the new dynamic broker configs; this broker keeps the old ones until the next change or restart",
			"cluster_default", m.ClusterDefault, "err", err)
		return
	}
	if len(eff.Reconfigure) > 0 || len(eff.Unapplied) > 0 {
		a.env.Log.Info("dynamic broker configs changed in ZooKeeper", "cluster_default", m.ClusterDefault, "topics_reconfigured", len(eff.Reconfigure))
	}
	for _, u := range eff.Unapplied {
		a.env.Log.Info("config stored but not acted on by samsa", "resource", u.Resource, "key", u.Key, "why", u.Why)
	}
	a.keystoresChanged(eff)
	a.apply(eff, nil)
}

// clusterDescribeConfigs answers DescribeConfigs: BROKER resources from
// this broker's state (its dynamic broker layers mirror ZooKeeper's),
// TOPIC resources for any topic of the cluster view from its
// /config/topics znode, read off the actor, as Kafka's ZooKeeper config
// repository reads it. GROUP resources are INVALID_REQUEST: Kafka 3.9
// has group configs in KRaft mode only (it fails the whole request; samsa
// fails only those resources).
func (a *metadataActor) clusterDescribeConfigs(req *wire.Request, body *kmsg.DescribeConfigsRequest) {
	resp := a.state.DescribeConfigs(body)
	view, layers, store := a.cl.view, a.state.Layers(), a.cfg.Cluster.Store
	var topics []int
	for i, res := range body.Resources {
		out := &resp.Resources[i]
		switch {
		case res.ResourceType == kmsg.ConfigResourceTypeTopic && out.ErrorCode != kerr.InvalidTopicException.Int16():
			topics = append(topics, i)
		case res.ResourceType == kmsg.ConfigResourceTypeBroker && out.ErrorCode == kerr.InvalidRequest.Int16():
			out.ErrorMessage = ptr(fmt.Sprintf("Unexpected broker id, expected %d or empty string, but received %s", a.env.BrokerID(), res.ResourceName))
		case res.ResourceType == kmsg.ConfigResourceTypeGroupConfig:
			out.Configs, out.ErrorCode, out.ErrorMessage = nil, kerr.InvalidRequest.Int16(), ptr("Group configs are supported on KRaft clusters only.")
		}
	}
	if len(topics) == 0 {
		env.Reply(req, resp)
		return
	}
	go func() {
		for _, i := range topics {
			res := body.Resources[i]
			if view.Topics[res.ResourceName] == nil && !existsInZK(store, res.ResourceName) {
				// Not in this broker's view, and not in ZooKeeper either
				// (a topic just made elsewhere is in ZooKeeper before the
				// controller's word reaches every broker: answer it).
				out := kmsg.NewDescribeConfigsResponseResource()
				out.ResourceType, out.ResourceName = res.ResourceType, res.ResourceName
				out.ErrorCode, out.ErrorMessage = kerr.UnknownTopicOrPartition.Int16(), ptr("") // as Kafka: no message
				resp.Resources[i] = out
				continue
			}
			cfg, err := store.EntityConfig(entityTopics, res.ResourceName)
			if err != nil {
				out := kmsg.NewDescribeConfigsResponseResource()
				out.ResourceType, out.ResourceName = res.ResourceType, res.ResourceName
				out.ErrorCode, out.ErrorMessage = kerr.UnknownServerError.Int16(), ptr("Could not read the topic's configs from ZooKeeper: "+err.Error())
				resp.Resources[i] = out
				continue
			}
			resp.Resources[i] = metadata.DescribeTopicConfigs(body, res, cfg, layers)
		}
		env.Reply(req, resp)
	}()
}

// alterResource is one resource of an AlterConfigs or
// IncrementalAlterConfigs request, and its outcome.
type alterResource struct {
	typ     kmsg.ConfigResourceType
	name    string
	changes []metadata.Alteration
	code    kerr.Code
	msg     *string
}

// clusterAlterConfigs serves the legacy AlterConfigs (replace) and
// IncrementalAlterConfigs in cluster mode, as Kafka's ZkAdminManager:
// TOPIC and BROKER resources only (the error messages are Kafka 3.9.1's); each resource's current configs are
// read from ZooKeeper, changed and checked by metadata.AlterConfig, and
// (unless validateOnly) written back with a change notification. A
// change of this broker's keystore settings is refused (INVALID_CONFIG)
// unless the new keystore reads (ActorConfig.CheckKeystore); the config
// watch then has the listener read it (brokerConfigsChanged).
// Resources are independent: one failing leaves the others done.
func (a *metadataActor) clusterAlterConfigs(req *wire.Request, rs []alterResource, replace, validateOnly bool, reply func([]alterResource)) {
	store, layers, me, log, check := a.cfg.Cluster.Store, a.state.Layers(), a.env.BrokerID(), a.env.Log, a.cfg.CheckKeystore
	go func() {
		for i := range rs {
			r := &rs[i]
			kind, entityType, entity, code, msg := alterEntity(store, r.typ, r.name, me)
			if code != kerr.None {
				r.code, r.msg = code, ptr(msg)
				continue
			}
			current, err := store.EntityConfig(entityType, entity)
			if err != nil {
				r.code, r.msg = kerr.UnknownServerError, ptr("Could not read the configs from ZooKeeper: "+err.Error())
				continue
			}
			next, code, msg := metadata.AlterConfig(kind, current, r.changes, replace, layers)
			if code == kerr.None && kind == metadata.BrokerConfigs {
				code, msg = metadata.CheckKeystores(check, r.changes, next, layers)
			}
			if code != kerr.None {
				r.code, r.msg = code, ptr(msg)
				continue
			}
			if validateOnly {
				continue
			}
			if err := store.SetEntityConfig(entityType, entity, next); err != nil {
				r.code, r.msg = kerr.UnknownServerError, ptr("Could not write the configs to ZooKeeper: "+err.Error())
				continue
			}
			log.Info("configs changed in ZooKeeper", "entity", entityType+"/"+entity, "keys", len(next), "client", req.ClientAddr)
		}
		reply(rs)
	}()
}

// alterEntity names the ZooKeeper entity a resource alters, or refuses
// it as Kafka's ZooKeeper mode does: a topic must exist in ZooKeeper; a
// broker resource is this broker's id (the admin client sends each
// broker its own) or empty, the cluster-wide default.
func alterEntity(store ClusterStore, typ kmsg.ConfigResourceType, name string, me int32) (kind metadata.ConfigKind, entityType, entity string, _ kerr.Code, _ string) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if err := metadata.ValidateTopicName(name); err != nil {
			return 0, "", "", kerr.InvalidTopicException, err.Error()
		}
		ok, err := store.TopicExists(name)
		if err != nil {
			return 0, "", "", kerr.UnknownServerError, "Could not read the topic from ZooKeeper: " + err.Error()
		}
		if !ok {
			return 0, "", "", kerr.UnknownTopicOrPartition, fmt.Sprintf("The topic '%s' does not exist.", name)
		}
		return metadata.TopicConfigs, entityTopics, name, kerr.None, ""
	case kmsg.ConfigResourceTypeBroker:
		if name == "" {
			return metadata.ClusterDefaultConfigs, entityBrokers, defaultEntity, kerr.None, ""
		}
		id, err := strconv.ParseInt(name, 10, 32)
		if err != nil || int32(id) != me {
			return 0, "", "", kerr.InvalidRequest, fmt.Sprintf("Unexpected broker id, expected %d, but received %s", me, name)
		}
		return metadata.BrokerConfigs, entityBrokers, name, kerr.None, ""
	}
	return 0, "", "", kerr.InvalidRequest, fmt.Sprintf("Unknown resource type %d", typ)
}

func (a *metadataActor) clusterLegacyAlterConfigs(req *wire.Request, body *kmsg.AlterConfigsRequest) {
	rs := make([]alterResource, len(body.Resources))
	for i, r := range body.Resources {
		rs[i] = alterResource{typ: r.ResourceType, name: r.ResourceName, changes: metadata.LegacyAlterations(r)}
	}
	a.clusterAlterConfigs(req, rs, true, body.ValidateOnly, func(rs []alterResource) {
		resp := body.ResponseKind().(*kmsg.AlterConfigsResponse)
		for _, r := range rs {
			out := kmsg.NewAlterConfigsResponseResource()
			out.ResourceType, out.ResourceName, out.ErrorCode, out.ErrorMessage = r.typ, r.name, r.code.Int16(), r.msg
			resp.Resources = append(resp.Resources, out)
		}
		env.Reply(req, resp)
	})
}

func (a *metadataActor) clusterIncrementalAlterConfigs(req *wire.Request, body *kmsg.IncrementalAlterConfigsRequest) {
	rs := make([]alterResource, len(body.Resources))
	for i, r := range body.Resources {
		rs[i] = alterResource{typ: r.ResourceType, name: r.ResourceName, changes: metadata.IncrementalAlterations(r)}
	}
	a.clusterAlterConfigs(req, rs, false, body.ValidateOnly, func(rs []alterResource) {
		resp := body.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, r := range rs {
			out := kmsg.NewIncrementalAlterConfigsResponseResource()
			out.ResourceType, out.ResourceName, out.ErrorCode, out.ErrorMessage = r.typ, r.name, r.code.Int16(), r.msg
			resp.Resources = append(resp.Resources, out)
		}
		env.Reply(req, resp)
	})
}

// existsInZK says whether ZooKeeper has the topic (false on error).
func existsInZK(store ClusterStore, name string) bool {
	ok, err := store.TopicExists(name)
	return err == nil && ok
}
