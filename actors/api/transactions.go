package api

import (
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/txn"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The transaction APIs (served when the broker runs transaction
// coordinators, Services.Txns): a producer's InitProducerId (with a
// transactional id), AddPartitionsToTxn, AddOffsetsToTxn and EndTxn go
// to the coordinator of its id (the actor of __transaction_state
// partition PartitionFor(id)), which answers NOT_COORDINATOR when another
// broker leads that partition; WriteTxnMarkers (from a coordinator,
// local or another broker's) goes to the partitions;
// DescribeTransactions and ListTransactions ask the coordinators here.
var (
	addPartitionsToTxn   = API{Key: kmsg.AddPartitionsToTxn, Handle: gated(gateTxn, handleAddPartitionsToTxn)}
	addOffsetsToTxn      = API{Key: kmsg.AddOffsetsToTxn, Handle: gated(gateTxn, handleAddOffsetsToTxn)}
	endTxn               = API{Key: kmsg.EndTxn, Handle: gated(gateTxn, handleEndTxn)}
	writeTxnMarkers      = API{Key: kmsg.WriteTxnMarkers, Handle: gated(gateTxn, handleWriteTxnMarkers)}
	describeTransactions = API{Key: kmsg.DescribeTransactions, Handle: gated(gateTxn, handleDescribeTransactions)}
	listTransactions     = API{Key: kmsg.ListTransactions, Handle: gated(gateTxn, handleListTransactions)}
)

// TxnOffsetCommit goes to the group's coordinator like OffsetCommit.
var txnOffsetCommit = API{Key: kmsg.TxnOffsetCommit, Handle: gated(gateGroups, handleGroupRequest)}

var transactionAPIs = []API{addPartitionsToTxn, addOffsetsToTxn, endTxn, writeTxnMarkers, txnOffsetCommit, describeTransactions, listTransactions}

// toTxnCoordinator sends in to the coordinator of transactional id id,
// or answers code through fail when there is none here.
func toTxnCoordinator(s *Services, id string, in any, fail func(kerr.Code)) {
	if s.Txns == nil {
		fail(kerr.CoordinatorNotAvailable)
		return
	}
	pid, _, ok := s.Txns.Of(id)
	switch {
	case !ok:
		fail(kerr.CoordinatorNotAvailable)
	case pid == nil:
		fail(kerr.NotCoordinator)
	default:
		s.Env.Send(pid, &txn.Call{In: in})
	}
}

// initTransactionalProducer serves InitProducerId for a transactional id.
func initTransactionalProducer(s *Services, req *wire.Request, body *kmsg.InitProducerIDRequest) {
	resp := body.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	answer := func(r txn.Reply) {
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = r.Err.Int16(), r.ProducerID, r.ProducerEpoch
		if r.Err != kerr.None {
			resp.ProducerID, resp.ProducerEpoch = -1, -1
		}
		env.Reply(req, resp)
	}
	in := txn.InitProducerID{Ref: answer, TransactionalID: *body.TransactionalID, TimeoutMs: body.TransactionTimeoutMillis,
		ProducerID: body.ProducerID, ProducerEpoch: body.ProducerEpoch, NewProducerID: -1}
	if body.Version < 3 {
		in.ProducerID, in.ProducerEpoch = -1, -1
	}
	if *body.TransactionalID == "" {
		answer(txn.Reply{Err: kerr.InvalidRequest})
		return
	}
	toTxnCoordinator(s, in.TransactionalID, in, func(code kerr.Code) { answer(txn.Reply{Err: code}) })
}

// handleAddPartitionsToTxn serves AddPartitionsToTxn: v0-3 from a
// producer (one transaction, its partitions added), v4+ from another
// broker (KIP-890: a batch of transactions, each added or, VerifyOnly,
// checked: a partition leader asks before a transactional batch opens a
// transaction there). An unknown partition fails its transaction: it
// gets UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED
// (Kafka).
func handleAddPartitionsToTxn(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.AddPartitionsToTxnRequest)
	resp := body.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if body.Version < 4 {
		t := kmsg.AddPartitionsToTxnRequestTransaction{TransactionalID: body.TransactionalID,
			ProducerID: body.ProducerID, ProducerEpoch: body.ProducerEpoch}
		for _, rt := range body.Topics {
			t.Topics = append(t.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: rt.Topic, Partitions: rt.Partitions})
		}
		addToTxn(s, &t, body.Version, func(r kmsg.AddPartitionsToTxnResponseTransaction) {
			for _, rt := range r.Topics {
				out := kmsg.NewAddPartitionsToTxnResponseTopic()
				out.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					op := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
					op.Partition, op.ErrorCode = rp.Partition, rp.ErrorCode
					out.Partitions = append(out.Partitions, op)
				}
				resp.Topics = append(resp.Topics, out)
			}
			env.Reply(req, resp)
		})
		return
	}
	resp.Transactions = make([]kmsg.AddPartitionsToTxnResponseTransaction, len(body.Transactions))
	if len(body.Transactions) == 0 {
		env.Reply(req, resp)
		return
	}
	left := new(atomic.Int32)
	left.Store(int32(len(body.Transactions)))
	for i := range body.Transactions {
		addToTxn(s, &body.Transactions[i], body.Version, func(r kmsg.AddPartitionsToTxnResponseTransaction) {
			resp.Transactions[i] = r // each answer its own slot; the last one replies
			if left.Add(-1) == 0 {
				env.Reply(req, resp)
			}
		})
	}
}

// addToTxn serves one transaction of an AddPartitionsToTxn and calls
// done once with its result.
func addToTxn(s *Services, t *kmsg.AddPartitionsToTxnRequestTransaction, version int16, done func(kmsg.AddPartitionsToTxnResponseTransaction)) {
	var parts []txn.TopicPartition
	unknown := false
	for _, rt := range t.Topics {
		for _, p := range rt.Partitions {
			if !partitionExists(s, rt.Topic, p) {
				unknown = true
			}
			parts = append(parts, txn.TopicPartition{Topic: rt.Topic, Partition: p})
		}
	}
	// answer gives partition i code(i), in the request's order.
	answer := func(code func(i int) kerr.Code) {
		r := kmsg.NewAddPartitionsToTxnResponseTransaction()
		r.TransactionalID = t.TransactionalID
		i := 0
		for _, rt := range t.Topics {
			out := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			out.Topic = rt.Topic
			for _, p := range rt.Partitions {
				op := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				op.Partition, op.ErrorCode = p, code(i).Int16()
				out.Partitions = append(out.Partitions, op)
				i++
			}
			r.Topics = append(r.Topics, out)
		}
		done(r)
	}
	all := func(c kerr.Code) {
		if version < 2 && c == kerr.ProducerFenced {
			c = kerr.InvalidProducerEpoch // PRODUCER_FENCED is v2+ (KIP-588)
		}
		answer(func(int) kerr.Code { return c })
	}
	if unknown {
		answer(func(i int) kerr.Code {
			if !partitionExists(s, parts[i].Topic, parts[i].Partition) {
				return kerr.UnknownTopicOrPartition
			}
			return kerr.OperationNotAttempted
		})
		return
	}
	if t.TransactionalID == "" {
		all(kerr.InvalidRequest)
		return
	}
	if t.VerifyOnly {
		in := txn.VerifyPartitions{TransactionalID: t.TransactionalID, ProducerID: t.ProducerID,
			ProducerEpoch: t.ProducerEpoch, Partitions: parts,
			Answer: func(codes []kerr.Code) { answer(func(i int) kerr.Code { return codes[i] }) }}
		toTxnCoordinator(s, t.TransactionalID, in, all)
		return
	}
	in := txn.AddPartitions{Ref: func(r txn.Reply) { all(r.Err) }, TransactionalID: t.TransactionalID,
		ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, Partitions: parts}
	toTxnCoordinator(s, t.TransactionalID, in, all)
}

func handleAddOffsetsToTxn(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.AddOffsetsToTxnRequest)
	resp := body.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	answer := func(r txn.Reply) {
		resp.ErrorCode = r.Err.Int16()
		env.Reply(req, resp)
	}
	n := offsetsPartitions(s)
	if n <= 0 {
		// No __consumer_offsets yet. Java's producer sends this before it
		// looks the group's coordinator up (the lookup that would make
		// the topic), and retries COORDINATOR_NOT_AVAILABLE here for
		// ever: make the topic, as a group's first request does, and
		// (alone) answer once it exists; in a cluster the client's retry
		// finds it once the controller has made it (as FindCoordinator).
		if s.Groups == nil || s.Env.Cluster != nil {
			if s.Groups != nil {
				s.Groups.WhenStarted(func(bool) {})
			}
			answer(txn.Reply{Err: kerr.CoordinatorNotAvailable})
			return
		}
		s.Groups.WhenStarted(func(ok bool) {
			if ok && offsetsPartitions(s) > 0 {
				handleAddOffsetsToTxn(s, req)
				return
			}
			answer(txn.Reply{Err: kerr.CoordinatorNotAvailable})
		})
		return
	}
	tp := txn.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: txn.PartitionFor(body.Group, n)}
	in := txn.AddPartitions{Ref: answer, TransactionalID: body.TransactionalID, ProducerID: body.ProducerID,
		ProducerEpoch: body.ProducerEpoch, Partitions: []txn.TopicPartition{tp}}
	toTxnCoordinator(s, body.TransactionalID, in, func(code kerr.Code) { answer(txn.Reply{Err: code}) })
}

func handleEndTxn(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.EndTxnRequest)
	resp := body.ResponseKind().(*kmsg.EndTxnResponse)
	answer := func(r txn.Reply) {
		resp.ErrorCode = r.Err.Int16()
		if body.Version < 2 && r.Err == kerr.ProducerFenced {
			resp.ErrorCode = kerr.InvalidProducerEpoch.Int16() // PRODUCER_FENCED is v2+ (KIP-588)
		}
		env.Reply(req, resp)
	}
	in := txn.EndTxn{Ref: answer, TransactionalID: body.TransactionalID, ProducerID: body.ProducerID,
		ProducerEpoch: body.ProducerEpoch, Commit: body.Commit}
	toTxnCoordinator(s, body.TransactionalID, in, func(code kerr.Code) { answer(txn.Reply{Err: code}) })
}

// handleWriteTxnMarkers writes each marker to this broker's partitions
// and answers once all have (or failed).
func handleWriteTxnMarkers(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.WriteTxnMarkersRequest)
	resp := body.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	resp.Markers = make([]kmsg.WriteTxnMarkersResponseMarker, len(body.Markers))
	left := new(atomic.Int32)
	left.Store(int32(len(body.Markers)))
	if len(body.Markers) == 0 {
		env.Reply(req, resp)
		return
	}
	for i := range body.Markers {
		m := &body.Markers[i]
		out := &resp.Markers[i]
		out.Default()
		out.ProducerID = m.ProducerID
		var tps []txn.TopicPartition
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, txn.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		txn.WriteLocal(s.Env, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch, tps, func(codes []kerr.Code) {
			for j, tp := range tps {
				if n := len(out.Topics); n == 0 || out.Topics[n-1].Topic != tp.Topic {
					rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
					rt.Topic = tp.Topic
					out.Topics = append(out.Topics, rt)
				}
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = tp.Partition, codes[j].Int16()
				rt := &out.Topics[len(out.Topics)-1]
				rt.Partitions = append(rt.Partitions, rp)
				if codes[j] == kerr.None && tp.Topic == coordinator.OffsetsTopic {
					s.Groups.TxnCompleted(tp.Partition, m.ProducerID, m.Committed)
				}
			}
			if left.Add(-1) == 0 {
				env.Reply(req, resp)
			}
		})
	}
}

func handleDescribeTransactions(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.DescribeTransactionsRequest)
	resp := body.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	byCoordinator := map[*actor.PID][]string{}
	states := make(map[string]kmsg.DescribeTransactionsResponseTransactionState, len(body.TransactionalIDs))
	for _, id := range body.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.ProducerEpoch = id, -1, -1
		var pid *actor.PID
		ok := false
		if s.Txns != nil {
			pid, _, ok = s.Txns.Of(id)
		}
		switch {
		case !ok:
			st.ErrorCode = kerr.CoordinatorNotAvailable.Int16()
		case pid == nil:
			st.ErrorCode = kerr.NotCoordinator.Int16()
		default:
			byCoordinator[pid] = append(byCoordinator[pid], id)
		}
		states[id] = st
	}
	finish := func() {
		for _, id := range body.TransactionalIDs {
			resp.TransactionStates = append(resp.TransactionStates, states[id])
		}
		env.Reply(req, resp)
	}
	askAll(s, byCoordinator, func(ids []string, txns []txn.Transaction, ok bool) {
		found := map[string]txn.Transaction{}
		for _, t := range txns {
			found[t.TransactionalID] = t
		}
		for _, id := range ids {
			st := states[id]
			t, known := found[id]
			switch {
			case !ok:
				st.ErrorCode = kerr.CoordinatorLoadInProgress.Int16()
			case !known:
				st.ErrorCode = kerr.TransactionalIDNotFound.Int16()
			default:
				st.State, st.TimeoutMillis, st.StartTimestamp = txn.StateName(t.State), t.TimeoutMs, t.StartMs
				st.ProducerID, st.ProducerEpoch = t.ProducerID, t.ProducerEpoch
				for _, tp := range t.Partitions {
					if n := len(st.Topics); n > 0 && st.Topics[n-1].Topic == tp.Topic {
						st.Topics[n-1].Partitions = append(st.Topics[n-1].Partitions, tp.Partition)
						continue
					}
					rt := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					rt.Topic, rt.Partitions = tp.Topic, []int32{tp.Partition}
					st.Topics = append(st.Topics, rt)
				}
			}
			states[id] = st
		}
	}, finish)
}

func handleListTransactions(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.ListTransactionsRequest)
	resp := body.ResponseKind().(*kmsg.ListTransactionsResponse)
	byCoordinator := map[*actor.PID][]string{}
	if s.Txns != nil {
		for _, pid := range s.Txns.PIDs() {
			if pid != nil {
				byCoordinator[pid] = nil
			}
		}
	}
	states := map[string]bool{}
	for _, st := range body.StateFilters {
		states[st] = true
	}
	pids := map[int64]bool{}
	for _, p := range body.ProducerIDFilters {
		pids[p] = true
	}
	askAll(s, byCoordinator, func(_ []string, txns []txn.Transaction, ok bool) {
		if !ok {
			resp.ErrorCode = kerr.CoordinatorLoadInProgress.Int16()
			resp.UnknownStateFilters = nil
			return
		}
		for _, t := range txns {
			name := txn.StateName(t.State)
			if (len(states) > 0 && !states[name]) || (len(pids) > 0 && !pids[t.ProducerID]) {
				continue
			}
			if body.DurationFilterMillis >= 0 && t.StartMs >= 0 && s.Env.Now().UnixMilli()-t.StartMs < body.DurationFilterMillis {
				continue
			}
			lt := kmsg.NewListTransactionsResponseTransactionState()
			lt.TransactionalID, lt.ProducerID, lt.TransactionState = t.TransactionalID, t.ProducerID, name
			resp.TransactionStates = append(resp.TransactionStates, lt)
		}
	}, func() {
		for st := range states {
			if !knownState(st) {
				resp.UnknownStateFilters = append(resp.UnknownStateFilters, st)
			}
		}
		env.Reply(req, resp)
	})
}

func knownState(name string) bool {
	for s := txn.Empty; s <= txn.PrepareEpochFence; s++ {
		if txn.StateName(s) == name {
			return true
		}
	}
	return false
}

// askAll sends a Describe for ids to each coordinator, then calls each
// with every answer in turn and finish, once all answered or the gather
// timeout passed (a coordinator that did not answer counts as loading).
func askAll(s *Services, by map[*actor.PID][]string, each func(ids []string, txns []txn.Transaction, ok bool), finish func()) {
	type answer struct {
		ids  []string
		txns []txn.Transaction
		ok   bool
	}
	var mu sync.Mutex
	answers := make([]answer, 0, len(by))
	closed := false
	pids := make([]*actor.PID, 0, len(by))
	for pid, ids := range by {
		pids = append(pids, pid)
		answers = append(answers, answer{ids: ids})
	}
	g := gather.New(len(pids), s.Env.GatherTimeout, func(_ []int64, _ bool) {
		mu.Lock()
		closed = true
		mu.Unlock()
		for _, a := range answers {
			each(a.ids, a.txns, a.ok)
		}
		finish()
	})
	for i, pid := range pids {
		slot := gather.Slot{G: g, I: i}
		s.Env.Send(pid, &txn.Describe{IDs: answers[i].ids, Answer: func(txns []txn.Transaction, ok bool) {
			mu.Lock()
			if !closed {
				answers[i].txns, answers[i].ok = txns, ok
			}
			mu.Unlock()
			slot.Put(0)
		}})
	}
}

// partitionExists reports whether topic/p exists in the cluster (or,
// alone, on this broker).
func partitionExists(s *Services, topic string, p int32) bool {
	if s.Env.Cluster != nil {
		v := s.Env.Cluster.Load()
		return v != nil && v.Partition(topic, p) != nil
	}
	_, code := s.Env.Routes.Load().Lookup(topic, p)
	return code != kerr.UnknownTopicOrPartition
}

// offsetsPartitions is __consumer_offsets' partition count, 0 if it does
// not exist yet.
func offsetsPartitions(s *Services) int32 {
	if s.Env.Cluster != nil {
		if v := s.Env.Cluster.Load(); v != nil {
			if t := v.Topics[coordinator.OffsetsTopic]; t != nil {
				return int32(len(t.Partitions))
			}
		}
		return 0
	}
	if t, ok := s.Env.Routes.Load().Topics[coordinator.OffsetsTopic]; ok {
		return int32(len(t.Partitions))
	}
	return 0
}
