package catalog

import (
	"fmt"
	"runtime/debug"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// serve runs one admin request through the core, by the type of its
// body (the APIs are registered in actors/api). A panic is a bug: the
// client gets no answer (it times out), the panic is logged with its
// stack, and the actor restarts from durable state.
func (a *metadataActor) serve(req *wire.Request) {
	defer func() {
		if r := recover(); r != nil {
			a.env.Log.Error("metadata actor failed on a request; restarting from disk", "api", wire.APIName(req.Header.APIKey),
				"client", req.ClientAddr, "panic", r, "stack", string(debug.Stack()))
			req.Reply(nil)
			panic(r)
		}
	}()
	if a.cl != nil && a.serveCluster(req) {
		return
	}
	switch body := req.Body.(type) {
	case *kmsg.MetadataRequest:
		a.handleMetadata(req, body)
	case *kmsg.CreateTopicsRequest:
		a.handleCreateTopics(req, body)
	case *kmsg.DeleteTopicsRequest:
		a.handleDeleteTopics(req, body, false)
	case *kmsg.CreatePartitionsRequest:
		a.handleCreatePartitions(req, body)
	case *kmsg.DescribeConfigsRequest:
		env.Reply(req, a.state.DescribeConfigs(body))
	case *kmsg.AlterConfigsRequest:
		// The legacy AlterConfigs replaces a resource's dynamic configs
		// as a whole; validated, persisted, then applied to running logs.
		resp, eff := a.state.AlterConfigs(body)
		a.logReconfigured(eff, req)
		a.keystoresChanged(eff)
		a.apply(eff, nil)
		for _, r := range body.Resources {
			if r.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
				a.publish()
				break
			}
		}
		env.Reply(req, resp)
	case *kmsg.IncrementalAlterConfigsRequest:
		// SET, DELETE, APPEND and SUBTRACT, applied live to every
		// partition the change reaches (one topic, or all of them for a
		// broker-level default).
		resp, eff := a.state.IncrementalAlterConfigs(body)
		a.logReconfigured(eff, req)
		a.keystoresChanged(eff)
		a.apply(eff, nil)
		a.publishGroupConfigs(body.Resources)
		env.Reply(req, resp)
	case *kmsg.DescribeClusterRequest:
		resp := a.state.DescribeCluster(body)
		if ep := a.listenerEndpoint(req); ep != nil {
			for i := range resp.Brokers {
				if resp.Brokers[i].NodeID == a.env.BrokerID() {
					resp.Brokers[i].Host, resp.Brokers[i].Port = ep.Host, ep.Port
				}
			}
		}
		env.Reply(req, resp)
	case *kmsg.DescribeLogDirsRequest:
		a.handleDescribeLogDirs(req, body)
	case *kmsg.InitProducerIDRequest:
		a.handleInitProducerID(req, body)
	default:
		a.env.Log.Error("the metadata actor does not serve this API; the api registry and the catalog disagree",
			"api", wire.APIName(req.Header.APIKey), "client", req.ClientAddr)
		req.Reply(nil)
	}
}

// handleMetadata answers Metadata (v0-12): brokers (this one, at its
// advertised address), cluster id, controller (this broker), and the
// requested topics, auto-creating unknown ones when
// auto.create.topics.enable and the request's allow_auto_topic_creation
// (v4+) both say so.
func (a *metadataActor) handleMetadata(req *wire.Request, body *kmsg.MetadataRequest) {
	resp, eff := a.state.Metadata(body, a.now())
	if ep := a.listenerEndpoint(req); ep != nil {
		for i := range resp.Brokers {
			if resp.Brokers[i].NodeID == a.env.BrokerID() {
				resp.Brokers[i].Host, resp.Brokers[i].Port = ep.Host, ep.Port
			}
		}
	}
	for _, t := range resp.Topics {
		if t.ErrorCode == 0 && t.Topic != nil && a.startsTopic(eff.Start, *t.Topic) {
			a.env.Log.Info("topic auto-created", "topic", *t.Topic, "partitions", len(t.Partitions), "client", req.ClientAddr)
		}
	}
	a.apply(eff, func() { env.Reply(req, resp) })
}

// listenerEndpoint is this broker's address for the listener req came
// in on, when the broker has several listeners; nil otherwise (the state's
// one endpoint stands).
func (a *metadataActor) listenerEndpoint(req *wire.Request) *metadata.Endpoint {
	if a.env.Endpoints.Load() == nil {
		return nil
	}
	return a.env.EndpointFor(req)
}

func (a *metadataActor) startsTopic(specs []metadata.PartitionSpec, name string) bool {
	for _, s := range specs {
		if s.Topic == name {
			return true
		}
	}
	return false
}

// handleCreateTopics serves CreateTopics (v0-7). The answer goes out once
// the topics are persisted and every new partition actor has opened its
// log, so the client can use the topic at once.
func (a *metadataActor) handleCreateTopics(req *wire.Request, body *kmsg.CreateTopicsRequest) {
	resp, eff := a.state.CreateTopics(body, a.now())
	if !body.ValidateOnly {
		for _, t := range resp.Topics {
			if t.ErrorCode == 0 {
				a.env.Log.Info("topic created", "topic", t.Topic, "partitions", t.NumPartitions, "client", req.ClientAddr)
			}
		}
	}
	a.apply(eff, func() { env.Reply(req, resp) })
}

// handleCreatePartitions serves CreatePartitions (v0-3): partitions are
// only ever added, and each new one gets its actor and log.
func (a *metadataActor) handleCreatePartitions(req *wire.Request, body *kmsg.CreatePartitionsRequest) {
	resp, eff := a.state.CreatePartitions(body)
	for _, t := range resp.Topics {
		if t.ErrorCode == 0 && !body.ValidateOnly {
			a.env.Log.Info("partitions added", "topic", t.Topic, "client", req.ClientAddr)
		}
	}
	a.apply(eff, func() { env.Reply(req, resp) })
}

// handleDeleteTopics deletes topics; the answer waits until every deleted
// partition's files are gone, so a client that deletes and re-creates a
// topic finds the name free. On a disk too full to persist the deletion,
// the topics' files are removed first and the request is served again
// once (retried): the disk then has the room the save needs. A crash in
// between leaves the topics with empty logs, still deletable.
func (a *metadataActor) handleDeleteTopics(req *wire.Request, body *kmsg.DeleteTopicsRequest, retried bool) {
	resp, eff := a.state.DeleteTopics(body)
	if len(eff.FreeSpace) > 0 && !retried {
		a.env.Log.Warn("the disk is too full to persist a topic deletion; removing the topics' files first",
			"partitions", len(eff.FreeSpace), "client", req.ClientAddr)
		self, root := a.ctx.Self(), a.env.System.Root
		a.remove(eff.FreeSpace, func() { root.Send(self, &retryDeleteTopics{req: req, body: body}) })
		a.publish()
		return
	}
	a.apply(eff, func() { env.Reply(req, resp) })
}

// keystoresChanged passes the listeners whose keystore settings changed
// to OnKeystores, before the answer goes out: the reload is done (or has
// failed, with a log line) by the time the client hears the change.
func (a *metadataActor) keystoresChanged(eff metadata.Effects) {
	if len(eff.KeystoresChanged) > 0 && a.cfg.OnKeystores != nil {
		a.cfg.OnKeystores(eff.KeystoresChanged, a.state.Layers())
	}
}

func (a *metadataActor) logReconfigured(eff metadata.Effects, req *wire.Request) {
	if len(eff.Reconfigure) > 0 {
		a.env.Log.Info("configs changed", "topics_reconfigured", len(eff.Reconfigure), "client", req.ClientAddr)
	}
	for _, u := range eff.Unapplied {
		a.env.Log.Info("config stored but not acted on by samsa", "resource", u.Resource, "key", u.Key, "why", u.Why,
			"client", req.ClientAddr)
	}
}

// handleDescribeLogDirs serves DescribeLogDirs (v1-4): every data
// directory with its capacity (v4) and the size of each requested
// partition, which its partition actor reports. The actors answer into a
// gather; the last one in sends the response.
func (a *metadataActor) handleDescribeLogDirs(req *wire.Request, body *kmsg.DescribeLogDirsRequest) {
	parts := a.state.LogDirPartitions(body)
	dirs := a.state.LogDirs()
	usage := make(map[string]metadata.DirUsage, len(dirs))
	for _, d := range dirs {
		usage[d] = diskUsage(d)
	}
	log := a.env.Log
	g := gather.New(len(parts), a.env.GatherTimeout, func(sizes []int64, timedOut bool) {
		if timedOut {
			log.Warn("DescribeLogDirs: partitions did not report in time; answering with sizes 0", "client", req.ClientAddr)
		}
		env.Reply(req, metadata.BuildDescribeLogDirs(body, dirs, parts, sizes, usage))
	})
	for i, p := range parts {
		pid, ok := a.parts[partKey{p.ID, p.Partition}]
		if !ok {
			g.Put(i, 0)
			continue
		}
		a.ctx.Send(pid, &partition.ReportSize{Reply: gather.Slot{G: g, I: i}})
	}
}

// diskUsage reads a directory's filesystem capacity.
func diskUsage(dir string) metadata.DirUsage {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return metadata.DirUsage{Err: err}
	}
	bs := int64(st.Bsize)
	return metadata.DirUsage{TotalBytes: int64(st.Blocks) * bs, UsableBytes: int64(st.Bavail) * bs}
}

// handleInitProducerID gives an idempotent producer a new producer id at
// epoch 0 (also when a v3+ client sends its old id and epoch to bump it:
// Kafka hands idempotent producers a fresh id then too). It runs in the
// metadata actor because a new block of ids is persisted to disk.
//
// With transactions turned off (samsa.transactions.enable=false; on, the
// transaction coordinators answer transactional ids) a transactional id is answered
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which every client treats as
// fatal and non-retriable, so a transactional producer fails at once with
// a clear error instead of retrying until a timeout (the broker logs why).
// Clients ask FindCoordinator for the transaction coordinator first, and
// that refusal (actors/api find_coordinator.go, logged once per client)
// stops them before they get here; this one is for a client that sends
// InitProducerId with a transactional id anyway.
func (a *metadataActor) handleInitProducerID(req *wire.Request, body *kmsg.InitProducerIDRequest) {
	resp := body.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if body.TransactionalID != nil {
		a.env.Log.Warn("transactional producer refused: transactions are turned off (samsa.transactions.enable=false)",
			"transactional_id", *body.TransactionalID, "client", req.ClientAddr, "client_id", req.Header.ClientID)
		resp.ErrorCode = int16(kerr.TransactionalIDAuthorizationFailed)
		env.Reply(req, resp)
		return
	}
	if a.cl != nil {
		// Ids come from the controller's cluster-wide blocks.
		a.clusterInitProducerID(req, resp)
		return
	}
	id, err := a.cfg.ProducerIDs.allocate(a.env.Config.LogDirs)
	if err != nil {
		a.env.Log.Error("cannot allocate producer ids", "err", err)
		resp.ErrorCode = int16(kerr.CoordinatorNotAvailable)
		env.Reply(req, resp)
		return
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	env.Reply(req, resp)
}

// allocateProducerID serves AllocateProducerID.
func (a *metadataActor) allocateProducerID(m *AllocateProducerID) {
	if a.cl != nil {
		a.cfg.Cluster.links.pids.take(m.Done)
		return
	}
	id, err := a.cfg.ProducerIDs.allocate(a.env.Config.LogDirs)
	if err != nil {
		a.env.Log.Error("cannot allocate producer ids", "err", err)
		m.Done(-1, kerr.CoordinatorNotAvailable)
		return
	}
	m.Done(id, kerr.None)
}

// createInternalTopic makes an internal topic unless it exists
// (CreateInternalTopic).
func (a *metadataActor) createInternalTopic(m *CreateInternalTopic) {
	if a.cl != nil {
		a.clusterInternalTopic(m)
		return
	}
	if t, ok := a.state.Topic(m.Name); ok {
		m.Done(int32(len(t.Partitions)), false, nil)
		return
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = m.Name, m.Partitions, 1
	for _, kv := range m.Configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = kv[0], &kv[1]
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, eff := a.state.CreateTopics(req, a.now())
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		msg := "no answer"
		if len(resp.Topics) == 1 && resp.Topics[0].ErrorMessage != nil {
			msg = *resp.Topics[0].ErrorMessage
		}
		m.Done(0, false, fmt.Errorf("catalog: create %s: %s", m.Name, msg))
		return
	}
	a.env.Log.Info("internal topic created", "topic", m.Name, "partitions", m.Partitions)
	a.apply(eff, func() { m.Done(m.Partitions, true, nil) })
}
