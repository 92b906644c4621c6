package catalog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The admin APIs in cluster mode, Kafka's ZK-mode admin path: the
// receiving broker checks the request against its view and writes
// ZooKeeper (off the actor: a round trip is milliseconds), the
// controller carries it out, and the answer waits until this broker's
// view shows the result or the request's timeout passes
// (REQUEST_TIMED_OUT, as Kafka's delayed operations answer).

// serveCluster serves the admin requests that differ in cluster mode;
// false means the single-node handler serves it unchanged.
func (a *metadataActor) serveCluster(req *wire.Request) bool {
	switch body := req.Body.(type) {
	case *kmsg.MetadataRequest:
		a.clusterMetadata(req, body)
	case *kmsg.DescribeClusterRequest:
		env.Reply(req, a.cl.view.DescribeCluster(body, a.env.ClientListenerOf(req.Session)))
	case *kmsg.CreateTopicsRequest:
		a.clusterCreateTopics(req, body)
	case *kmsg.DeleteTopicsRequest:
		a.clusterDeleteTopics(req, body)
	case *kmsg.CreatePartitionsRequest:
		a.clusterCreatePartitions(req, body)
	case *kmsg.DescribeConfigsRequest:
		a.clusterDescribeConfigs(req, body)
	case *kmsg.AlterConfigsRequest:
		a.clusterLegacyAlterConfigs(req, body)
	case *kmsg.IncrementalAlterConfigsRequest:
		a.clusterIncrementalAlterConfigs(req, body)
	default:
		return false
	}
	return true
}

func (a *metadataActor) defaults() cluster.Defaults {
	return cluster.Defaults{Partitions: int32(config.ParseInt(a.brokerValue(config.KeyNumPartitions))),
		ReplicationFactor: int16(config.ParseInt(a.brokerValue(config.KeyReplicationFactor))), Layers: a.state.Layers()}
}

func (a *metadataActor) brokerValue(key string) string {
	e, _ := config.ResolveBroker(key, a.state.Layers())
	return e.Value
}

// clusterMetadata answers Metadata from the view; topics it lacks are
// created when auto.create.topics.enable and the request allow it, and
// answered LEADER_NOT_AVAILABLE meanwhile, as Kafka does.
func (a *metadataActor) clusterMetadata(req *wire.Request, body *kmsg.MetadataRequest) {
	resp, missing := a.cl.view.Metadata(body, a.env.ClientListenerOf(req.Session))
	if body.Version >= 8 && body.IncludeTopicAuthorizedOperations {
		for i := range resp.Topics {
			if resp.Topics[i].Topic != nil && resp.Topics[i].ErrorCode == 0 {
				resp.Topics[i].AuthorizedOperations = metadata.TopicOperations()
			}
		}
	}
	auto := config.ParseBool(a.brokerValue(config.KeyAutoCreateTopics)) && (body.Version < 4 || body.AllowAutoTopicCreation)
	if !auto || len(missing) == 0 {
		env.Reply(req, resp)
		return
	}
	d := a.defaults()
	if int(d.ReplicationFactor) > len(a.cl.view.Brokers) {
		for i := range resp.Topics {
			if resp.Topics[i].ErrorCode == kerr.UnknownTopicOrPartition.Int16() {
				resp.Topics[i].ErrorCode = kerr.InvalidReplicationFactor.Int16()
			}
		}
		env.Reply(req, resp)
		return
	}
	for i := range resp.Topics {
		if resp.Topics[i].ErrorCode == kerr.UnknownTopicOrPartition.Int16() {
			resp.Topics[i].ErrorCode = kerr.LeaderNotAvailable.Int16()
		}
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	for _, name := range missing {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, -1, -1
		create.Topics = append(create.Topics, t)
	}
	view, store, log, client := a.cl.view, a.cfg.Cluster.Store, a.env.Log, req.ClientAddr
	mode := a.cfg.Cluster
	env.Reply(req, resp)
	go func() {
		var plans []cluster.TopicPlan
		mode.withRand(func(r *rand.Rand) {
			plans, _ = view.PlanCreateTopics(create, d, func(string) bool { return false }, r)
		})
		for _, p := range plans {
			err := store.CreateTopic(p.Name, p.ID, p.Assignment, p.Configs)
			switch {
			case err == nil:
				log.Info("topic auto-created", "topic", p.Name, "partitions", len(p.Assignment), "client", client)
			case !errors.Is(err, ErrTopicExists):
				log.Warn("cannot auto-create a topic in ZooKeeper", "topic", p.Name, "err", err)
			}
		}
	}()
}

// requestContext bounds an admin request's wait by its timeout_ms (at
// least one second, at most the broker's gather timeout when unset).
func (a *metadataActor) requestContext(timeoutMs int32) (context.Context, context.CancelFunc) {
	d := time.Duration(timeoutMs) * time.Millisecond
	if d <= 0 {
		d = a.env.GatherTimeout
	}
	return context.WithTimeout(context.Background(), max(d, time.Second))
}

func (a *metadataActor) clusterCreateTopics(req *wire.Request, body *kmsg.CreateTopicsRequest) {
	view, store, mode, log := a.cl.view, a.cfg.Cluster.Store, a.cfg.Cluster, a.env.Log
	self, root := a.ctx.Self(), a.env.System.Root
	d := a.defaults()
	go func() {
		ctx, cancel := a.requestContext(body.TimeoutMillis)
		defer cancel()
		exists := func(name string) bool {
			ok, err := store.TopicExists(name)
			return err == nil && ok
		}
		var plans []cluster.TopicPlan
		var resp *kmsg.CreateTopicsResponse
		mode.withRand(func(r *rand.Rand) { plans, resp = view.PlanCreateTopics(body, d, exists, r) })
		var written []cluster.TopicPlan
		for _, p := range plans {
			out := &resp.Topics[p.At]
			err := store.CreateTopic(p.Name, p.ID, p.Assignment, p.Configs)
			switch {
			case errors.Is(err, ErrTopicExists):
				out.ErrorCode, out.ErrorMessage = kerr.TopicAlreadyExists.Int16(), ptr(fmt.Sprintf("Topic '%s' already exists.", p.Name))
			case err != nil:
				out.ErrorCode, out.ErrorMessage = kerr.UnknownServerError.Int16(), ptr("Could not write the topic to ZooKeeper: "+err.Error())
			default:
				written = append(written, p)
				log.Info("topic created", "topic", p.Name, "partitions", len(p.Assignment), "replication_factor", len(p.Assignment[0]), "client", req.ClientAddr)
			}
		}
		for _, p := range written {
			ready := waitFor(ctx, root, self, func(v *cluster.View) bool { return hasLeaders(v, p.Name, len(p.Assignment)) })
			if !ready {
				out := &resp.Topics[p.At]
				out.ErrorCode, out.ErrorMessage = kerr.RequestTimedOut.Int16(), ptr("The topic is in ZooKeeper; its partitions had no leader yet when the request timed out.")
			}
		}
		env.Reply(req, resp)
	}()
}

// hasLeaders reports whether the view has topic name with n partitions,
// each with a leader.
func hasLeaders(v *cluster.View, name string, n int) bool {
	t := v.Topics[name]
	if t == nil || len(t.Partitions) < n {
		return false
	}
	for _, p := range t.Partitions[:n] {
		if p == nil || p.Leader < 0 {
			return false
		}
	}
	return true
}

func ptr(s string) *string { return &s }

func (a *metadataActor) clusterDeleteTopics(req *wire.Request, body *kmsg.DeleteTopicsRequest) {
	resp := body.ResponseKind().(*kmsg.DeleteTopicsResponse)
	view, store := a.cl.view, a.cfg.Cluster.Store
	enabled := a.env.Config.DeleteTopicEnable
	self, root, log := a.ctx.Self(), a.env.System.Root, a.env.Log
	type target struct {
		at   int
		name string
	}
	var targets []target
	add := func(name *string, id [16]byte) {
		out := kmsg.NewDeleteTopicsResponseTopic()
		out.Topic, out.TopicID = name, id
		var t *cluster.Topic
		if name != nil {
			t = view.Topics[*name]
		} else {
			t, _ = view.TopicByID(id)
		}
		switch {
		case t == nil && name == nil:
			out.ErrorCode = kerr.UnknownTopicID.Int16()
		case t == nil:
			out.ErrorCode = kerr.UnknownTopicOrPartition.Int16()
		case !enabled:
			out.ErrorCode, out.ErrorMessage = kerr.TopicDeletionDisabled.Int16(), ptr("Topic deletion is disabled.")
		default:
			out.Topic, out.TopicID = ptr(t.Name), t.ID
			targets = append(targets, target{len(resp.Topics), t.Name})
		}
		resp.Topics = append(resp.Topics, out)
	}
	for _, n := range body.TopicNames { // v0-5
		add(ptr(n), [16]byte{})
	}
	for _, t := range body.Topics { // v6+
		add(t.Topic, t.TopicID)
	}
	go func() {
		ctx, cancel := a.requestContext(body.TimeoutMillis)
		defer cancel()
		var marked []target
		for _, t := range targets {
			if err := store.MarkForDeletion(t.name); err != nil {
				resp.Topics[t.at].ErrorCode, resp.Topics[t.at].ErrorMessage = kerr.UnknownServerError.Int16(), ptr("Could not mark the topic for deletion in ZooKeeper: "+err.Error())
				continue
			}
			log.Info("topic marked for deletion", "topic", t.name, "client", req.ClientAddr)
			marked = append(marked, t)
		}
		for _, t := range marked {
			if !waitFor(ctx, root, self, func(v *cluster.View) bool { _, ok := v.Topics[t.name]; return !ok }) {
				resp.Topics[t.at].ErrorCode = kerr.RequestTimedOut.Int16()
			}
		}
		env.Reply(req, resp)
	}()
}

func (a *metadataActor) clusterCreatePartitions(req *wire.Request, body *kmsg.CreatePartitionsRequest) {
	view, store, mode := a.cl.view, a.cfg.Cluster.Store, a.cfg.Cluster
	self, root, log := a.ctx.Self(), a.env.System.Root, a.env.Log
	go func() {
		ctx, cancel := a.requestContext(body.TimeoutMillis)
		defer cancel()
		deleting := func(name string) bool {
			ok, err := store.MarkedForDeletion(name)
			return err == nil && ok
		}
		var plans []cluster.GrowthPlan
		var resp *kmsg.CreatePartitionsResponse
		mode.withRand(func(r *rand.Rand) { plans, resp = view.PlanCreatePartitions(body, deleting, r) })
		var written []cluster.GrowthPlan
		for _, p := range plans {
			t := view.Topics[p.Name]
			if err := store.SetAssignment(p.Name, t.ID, p.Assignment); errors.Is(err, ErrReassignmentInProgress) {
				resp.Topics[p.At].ErrorCode = kerr.ReassignmentInProgress.Int16()
				resp.Topics[p.At].ErrorMessage = ptr("A partition reassignment is in progress for the topic '" + p.Name + "'.")
				continue
			} else if err != nil {
				resp.Topics[p.At].ErrorCode, resp.Topics[p.At].ErrorMessage = kerr.UnknownServerError.Int16(), ptr("Could not write the assignment to ZooKeeper: "+err.Error())
				continue
			}
			log.Info("partitions added", "topic", p.Name, "partitions", len(p.Assignment), "client", req.ClientAddr)
			written = append(written, p)
		}
		for _, p := range written {
			if !waitFor(ctx, root, self, func(v *cluster.View) bool { return hasLeaders(v, p.Name, len(p.Assignment)) }) {
				resp.Topics[p.At].ErrorCode = kerr.RequestTimedOut.Int16()
			}
		}
		env.Reply(req, resp)
	}()
}

// clusterInternalTopic makes an internal topic through ZooKeeper unless
// the view has it, with the replication factor the broker configures for
// it (offsets.topic.replication.factor) and never fewer live brokers than
// that, as Kafka refuses (the caller answers COORDINATOR_NOT_AVAILABLE and
// clients retry); Done runs once its partitions have leaders.
func (a *metadataActor) clusterInternalTopic(m *CreateInternalTopic) {
	if t := a.cl.view.Topics[m.Name]; t != nil {
		m.Done(int32(len(t.Partitions)), false, nil)
		return
	}
	rf, key := a.env.Config.Cluster.OffsetsReplicationFactor, config.KeyOffsetsReplicationFactor
	if m.ReplicationFactor > 0 {
		rf, key = m.ReplicationFactor, m.ReplicationFactorKey
	}
	if live := len(a.cl.view.Brokers); int(rf) > live {
		m.Done(0, false, fmt.Errorf("catalog: %s needs %s=%d live brokers, %d are up", m.Name, key, rf, live))
		return
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = m.Name, m.Partitions, rf
	for _, kv := range m.Configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = kv[0], &kv[1]
		rt.Configs = append(rt.Configs, c)
	}
	create.Topics = []kmsg.CreateTopicsRequestTopic{rt}
	view, store, mode, d := a.cl.view, a.cfg.Cluster.Store, a.cfg.Cluster, a.defaults()
	self, root, log := a.ctx.Self(), a.env.System.Root, a.env.Log
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*a.env.GatherTimeout)
		defer cancel()
		var plans []cluster.TopicPlan
		var resp *kmsg.CreateTopicsResponse
		mode.withRand(func(r *rand.Rand) {
			plans, resp = view.PlanCreateTopics(create, d, func(string) bool { return false }, r)
		})
		if len(plans) == 1 {
			err := store.CreateTopic(m.Name, plans[0].ID, plans[0].Assignment, plans[0].Configs)
			switch {
			case err == nil:
				log.Info("internal topic created", "topic", m.Name, "partitions", m.Partitions, "replication_factor", rf)
			case !errors.Is(err, ErrTopicExists):
				m.Done(0, false, fmt.Errorf("catalog: create %s in ZooKeeper: %w", m.Name, err))
				return
			}
		} else if code := resp.Topics[0].ErrorCode; code != kerr.TopicAlreadyExists.Int16() {
			m.Done(0, false, fmt.Errorf("catalog: create %s: %s", m.Name, kerr.Code(code)))
			return
		}
		n := 0
		if !waitFor(ctx, root, self, func(v *cluster.View) bool {
			t := v.Topics[m.Name]
			if t == nil || !hasLeaders(v, m.Name, len(t.Partitions)) {
				return false
			}
			n = len(t.Partitions)
			return true
		}) {
			m.Done(0, false, fmt.Errorf("catalog: %s has no leaders yet", m.Name))
			return
		}
		m.Done(int32(n), true, nil)
	}()
}
