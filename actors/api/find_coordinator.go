package api

import (
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/txn"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Coordinator key types (FindCoordinator's KeyType).
const (
	coordinatorKeyGroup       = 0
	coordinatorKeyTransaction = 1
)

var findCoordinator = API{Key: kmsg.FindCoordinator, Handle: gated(gateFindCoordinator, handleFindCoordinator)}

// handleFindCoordinator serves FindCoordinator v0-6 on the loop. A group's
// coordinator is the leader of __consumer_offsets partition
// PartitionFor(group): in single-node mode this broker, once the topic
// exists.
//
// With transactions turned off (samsa.transactions.enable=false: no
// coordinators, s.Txns nil) a transactional producer must fail at once
// rather than wait for a coordinator: its first request is this
// one (InitProducerId goes to the coordinator it names), so the refusal
// is here. COORDINATOR_NOT_AVAILABLE is retriable, and every client
// retries it for ever (librdkafka) or until its own timeout; the one code
// the Java producer, librdkafka and franz-go all treat as fatal for a
// transaction key is TRANSACTIONAL_ID_AUTHORIZATION_FAILED (Java and
// librdkafka also stop on CLUSTER_AUTHORIZATION_FAILED, franz-go on any
// non-retriable code), so that is the answer, with a message saying
// transactions are not supported (v1+; librdkafka shows it, Java and
// franz-go show the code's own text). The broker logs the refusal once
// per client (txnRefusals).
func handleFindCoordinator(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.FindCoordinatorRequest)
	txns := body.CoordinatorType == coordinatorKeyTransaction && s.Txns != nil
	if s.Env.Cluster != nil && (body.CoordinatorType == coordinatorKeyGroup || txns) {
		answerClusterFindCoordinator(s, req, body)
		return
	}
	if txns && s.Txns.PIDs() == nil {
		// The first transactional request makes __transaction_state.
		s.Txns.WhenStarted(func(bool) { answerFindCoordinator(s, req, body) })
		return
	}
	if body.CoordinatorType == coordinatorKeyGroup && s.Groups.PIDs() == nil {
		// The first group request of a broker creates __consumer_offsets:
		// answer when it is ready (a few milliseconds) rather than send
		// the client into its retry backoff.
		s.Groups.WhenStarted(func(bool) { answerFindCoordinator(s, req, body) })
		return
	}
	answerFindCoordinator(s, req, body)
}

func answerFindCoordinator(s *Services, req *wire.Request, body *kmsg.FindCoordinatorRequest) {
	resp := body.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.Version = body.Version
	keys := body.CoordinatorKeys
	if body.Version < 4 {
		keys = []string{body.CoordinatorKey}
	}
	ep := s.Env.EndpointFor(req)
	for _, key := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Port = key, -1, -1
		var msg string
		switch body.CoordinatorType {
		case coordinatorKeyGroup:
			if _, ok := s.Groups.Of(key); !ok || ep == nil {
				c.ErrorCode, msg = kerr.CoordinatorNotAvailable.Int16(), "the group coordinator could not start; see the broker log"
				break
			}
			c.NodeID, c.Host, c.Port = s.Env.BrokerID(), ep.Host, ep.Port
		case coordinatorKeyTransaction:
			if s.Txns == nil {
				c.ErrorCode, msg = kerr.TransactionalIDAuthorizationFailed.Int16(), txnRefusalMessage
				break
			}
			if _, _, ok := s.Txns.Of(key); !ok || ep == nil {
				c.ErrorCode, msg = kerr.CoordinatorNotAvailable.Int16(), "the transaction coordinator could not start; see the broker log"
				break
			}
			c.NodeID, c.Host, c.Port = s.Env.BrokerID(), ep.Host, ep.Port
		default:
			c.ErrorCode, msg = kerr.InvalidRequest.Int16(), "unknown coordinator key type"
		}
		if msg != "" {
			c.ErrorMessage = &msg
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if body.CoordinatorType == coordinatorKeyTransaction && s.Txns == nil && len(keys) > 0 {
		txnRefusals.note(s, req, keys[0])
	}
	if body.Version < 4 {
		c := resp.Coordinators[0]
		resp.Coordinators = nil
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.ErrorMessage, c.NodeID, c.Host, c.Port
	}
	env.Reply(req, resp)
}

// txnRefusalMessage is the error message of a refused transaction
// coordinator lookup.
const txnRefusalMessage = "transactions are not supported by this broker: they are turned off (samsa.transactions.enable=false); " +
	"turn them on or use a producer without transactional.id (idempotent producers are supported)"

// txnRefusals logs a refused transactional client once: per client id and
// host (a client reconnects from new ports). It remembers at most
// maxRefusalsLogged clients, so a client cycling through ids cannot grow
// the broker's memory or flood its log; past that, one line says later
// refusals go unlogged. One per process, like the broker.
var txnRefusals = refusalLog{seen: map[refusedClient]struct{}{}}

const maxRefusalsLogged = 1024

type refusedClient struct{ id, host string }

type refusalLog struct {
	mu   sync.Mutex
	seen map[refusedClient]struct{}
	full bool // the "no more" line is logged
}

// note logs the refusal of the transactional id key to req's client
// unless that client was logged before.
func (l *refusalLog) note(s *Services, req *wire.Request, key string) {
	host := req.ClientAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	c := refusedClient{id: req.Header.ClientID, host: host}
	l.mu.Lock()
	_, seen := l.seen[c]
	room := len(l.seen) < maxRefusalsLogged
	if !seen && room {
		l.seen[c] = struct{}{}
	}
	last := !seen && !room && !l.full
	if last {
		l.full = true
	}
	l.mu.Unlock()
	switch {
	case !seen && room:
		s.Env.Log.Warn("transactional producer refused: transactions are turned off (samsa.transactions.enable=false); "+
			"answering its FindCoordinator TRANSACTIONAL_ID_AUTHORIZATION_FAILED so it fails at once (logged once per client)",
			"client_id", req.Header.ClientID, "client", req.ClientAddr, "transactional_id", key)
	case last:
		s.Env.Log.Warn("transactional producers refused: more clients than are logged one by one; further refusals go unlogged",
			"clients_logged", maxRefusalsLogged, "client_id", req.Header.ClientID, "client", req.ClientAddr)
	}
}

// answerClusterFindCoordinator names the leader of each group's
// __consumer_offsets partition (or transactional id's __transaction_state
// partition), from the cluster view. Without the topic it asks for it to
// be made (offsets.topic.replication.factor or
// transaction.state.log.replication.factor live brokers are needed) and
// answers COORDINATOR_NOT_AVAILABLE, as Kafka does; clients retry.
func answerClusterFindCoordinator(s *Services, req *wire.Request, body *kmsg.FindCoordinatorRequest) {
	resp := body.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.Version = body.Version
	keys := body.CoordinatorKeys
	if body.Version < 4 {
		keys = []string{body.CoordinatorKey}
	}
	v := s.Env.Cluster.Load()
	topic, ensure := coordinator.OffsetsTopic, s.Groups.WhenStarted
	if body.CoordinatorType == coordinatorKeyTransaction {
		topic, ensure = txn.TransactionTopic, s.Txns.WhenStarted
	}
	t := v.Topics[topic]
	if t == nil {
		ensure(func(bool) {})
	}
	for _, key := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Port = key, -1, -1
		c.ErrorCode = kerr.CoordinatorNotAvailable.Int16()
		if t != nil && len(t.Partitions) > 0 {
			p := t.Partition(group.PartitionFor(key, int32(len(t.Partitions))))
			if p != nil {
				if b, ok := v.Brokers[p.Leader]; ok {
					if e, ok := b.Endpoint(s.Env.ClientListenerOf(req.Session)); ok {
						c.ErrorCode, c.NodeID, c.Host, c.Port = 0, b.ID, e.Host, e.Port
					}
				}
			}
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if body.Version < 4 {
		c := resp.Coordinators[0]
		resp.Coordinators = nil
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.ErrorMessage, c.NodeID, c.Host, c.Port
	}
	env.Reply(req, resp)
}
