package txn

import (
	"slices"
	"sort"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Core is one __transaction_state partition's transaction coordinator
// while this broker leads that partition: the state of every
// transactional id that hashes to it. It follows Kafka's
// TransactionCoordinator and TransactionMetadata: each change of a
// transaction's state is one record in the partition, and takes effect
// only once that record is durable; while it is being written the
// transaction is "pending" and every other request for it is answered
// CONCURRENT_TRANSACTIONS.
//
// Every method takes one input (and the time in milliseconds) and
// returns the Effects to carry out. A Core serves one coordinator epoch
// (the partition's leader epoch when it was loaded): on losing the
// partition the shell calls Unload and drops it, and a new leadership
// loads a new Core from the log.
type Core struct {
	cfg   Config
	epoch int32
	txns  map[string]*txn
	next  uint64          // last token given
	open  map[uint64]*txn // transactions with a write in flight, by token
	// parked are AddPartitionsToTxn requests waiting for their id's
	// previous transaction to complete (add.go).
	parked map[string][]parkedAdd
	fx     Effects // being built by the current call
}

// txn is one transactional id's state.
type txn struct {
	id string
	record
	// prevPID and lastEpoch are Kafka's lastProducerId and
	// lastProducerEpoch: what the producer had before the last bump, so a
	// retried InitProducerId (KIP-360) is recognised and not fenced.
	prevPID   int64
	lastEpoch int16
	// fenceFailed: an epoch bump to fence the producer (timeout, or an
	// InitProducerId during a transaction) was not written; the bump
	// stands in memory (the old producer stays fenced) and the next try
	// does not bump again.
	fenceFailed bool
	// completeDue: the markers are written but the Complete record failed;
	// Tick writes it again.
	completeDue bool
	pending     *transit
}

// transit is a write in flight and what its success or failure means.
type transit struct {
	token     uint64
	to        record
	prevPID   int64
	lastEpoch int16
	kind      transitKind
	ref       any // the request to answer, if any
}

type transitKind uint8

const (
	transitInit     transitKind = iota + 1 // InitProducerId
	transitAdd                             // AddPartitionsToTxn / AddOffsetsToTxn
	transitPrepare                         // EndTxn from the producer
	transitFence                           // an abort the coordinator started (timeout, fencing)
	transitComplete                        // markers written
	transitExpire                          // tombstone of an expired id
)

// New returns the coordinator of one __transaction_state partition,
// loaded at coordinator epoch epoch (the partition's leader epoch). Feed
// it the partition's records with Load, then call Loaded.
func New(cfg Config, epoch int32) *Core {
	return &Core{cfg: cfg, epoch: epoch, txns: map[string]*txn{}, open: map[uint64]*txn{}, parked: map[string][]parkedAdd{}}
}

// Epoch is the coordinator epoch the markers carry.
func (c *Core) Epoch() int32 { return c.epoch }

// Load applies one record of the partition, in log order. A record that
// does not decode is reported and changes nothing.
func (c *Core) Load(key, value []byte) error {
	id, err := decodeKey(key)
	if err != nil {
		return err
	}
	if value == nil {
		delete(c.txns, id)
		return nil
	}
	r, err := decodeValue(id, value)
	if err != nil {
		return err
	}
	c.txns[id] = &txn{id: id, record: r, prevPID: -1, lastEpoch: -1}
	return nil
}

// Loaded ends loading: transactions the previous coordinator left
// prepared get their markers (again; partitions ignore a repeat).
func (c *Core) Loaded(now int64) Effects {
	c.begin()
	for _, id := range c.sortedIDs() {
		t := c.txns[id]
		if t.state == PrepareCommit || t.state == PrepareAbort {
			c.sendMarkers(t)
		}
	}
	return c.end()
}

// Unload is losing the partition: requests waiting on a write are
// answered NOT_COORDINATOR (the client finds the new coordinator and
// retries there). The Core must not be used afterwards.
func (c *Core) Unload() Effects {
	c.begin()
	for _, tok := range sortedTokens(c.open) {
		if p := c.open[tok].pending; p != nil && p.ref != nil {
			c.reply(p.ref, kerr.NotCoordinator)
		}
	}
	for _, id := range sortedKeys(c.parked) {
		for _, w := range c.parked[id] {
			c.reply(w.in.Ref, kerr.NotCoordinator)
		}
	}
	c.open = map[uint64]*txn{}
	c.txns = map[string]*txn{}
	c.parked = map[string][]parkedAdd{}
	return c.end()
}

// Transactions lists every transactional id's state, sorted by id.
func (c *Core) Transactions() []Transaction {
	out := make([]Transaction, 0, len(c.txns))
	for _, id := range c.sortedIDs() {
		out = append(out, c.txns[id].view())
	}
	return out
}

// Describe is one transactional id's state.
func (c *Core) Describe(id string) (Transaction, bool) {
	t, ok := c.txns[id]
	if !ok {
		return Transaction{}, false
	}
	return t.view(), true
}

func (t *txn) view() Transaction {
	return Transaction{
		TransactionalID: t.id, ProducerID: t.pid, ProducerEpoch: t.epoch, TimeoutMs: t.timeoutMs,
		State: t.state, StartMs: t.startMs, UpdateMs: t.updateMs, Partitions: slices.Clone(t.parts),
	}
}

// Verify is KIP-890's check before a partition leader appends a
// transactional batch that would open the producer's transaction on that
// partition (AddPartitionsToTxn v4+ with VerifyOnly), answered as
// Kafka's handleVerifyPartitionsInTransaction: the id must be known at
// this producer id (INVALID_PRODUCER_ID_MAPPING) and epoch
// (PRODUCER_FENCED), not between its prepare record and its markers
// (CONCURRENT_TRANSACTIONS), and each partition is NONE when the open
// transaction has it, TRANSACTION_ABORTABLE otherwise (the leader maps
// that to what its client understands). A write in flight is not
// waited for: the partitions a transaction has are those durable in its
// record, and the leader's own guard covers the race with a marker.
func (c *Core) Verify(id string, pid int64, epoch int16, parts []TopicPartition) []kerr.Code {
	out := make([]kerr.Code, len(parts))
	t, ok := c.txns[id]
	all := kerr.None
	switch {
	case !ok || t.pid != pid:
		all = kerr.InvalidProducerIDMapping
	case t.epoch != epoch:
		all = kerr.ProducerFenced
	case t.state == PrepareCommit || t.state == PrepareAbort:
		all = kerr.ConcurrentTransactions
	}
	for i, tp := range parts {
		switch {
		case all != kerr.None:
			out[i] = all
		case !contains(t.parts, []TopicPartition{tp}):
			out[i] = kerr.TransactionAbortable
		}
	}
	return out
}

func (c *Core) begin() { c.fx = Effects{} }

func (c *Core) end() Effects {
	fx := c.fx
	c.fx = Effects{}
	return fx
}

func (c *Core) reply(ref any, code kerr.Code) {
	c.fx.Replies = append(c.fx.Replies, Reply{Ref: ref, Err: code, ProducerID: -1, ProducerEpoch: -1})
}

// write starts t's transition to p.to: one record, pending until
// Appended.
func (c *Core) write(t *txn, p transit) {
	c.next++
	p.token = c.next
	t.pending = &p
	c.open[p.token] = t
	a := Append{Token: p.token, Key: encodeKey(t.id)}
	if p.kind != transitExpire {
		a.Value = encodeValue(&p.to)
	}
	c.fx.Appends = append(c.fx.Appends, a)
}

func (c *Core) sendMarkers(t *txn) {
	c.fx.Markers = append(c.fx.Markers, Markers{
		TransactionalID: t.id, ProducerID: t.pid, ProducerEpoch: t.epoch,
		Commit: t.state == PrepareCommit, CoordinatorEpoch: c.epoch, Partitions: slices.Clone(t.parts),
	})
}

func (c *Core) sortedIDs() []string {
	ids := make([]string, 0, len(c.txns))
	for id := range c.txns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func sortedTokens(m map[uint64]*txn) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
