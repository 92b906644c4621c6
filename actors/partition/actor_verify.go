package partition

import (
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// TxnLink is what the partitions need of the broker's transactions, one
// value shared by all of them: the verifier of KIP-890 (the transaction
// coordinators, set once they run) and the broker's config layers, which
// the metadata actor publishes at every change (SetLayers), so the
// dynamic transaction.partition.verification.enable and
// producer.id.expiration.ms are read at each use.
type TxnLink struct {
	verify atomic.Pointer[VerifyFunc]
	// Resolved at each SetLayers, so the produce path reads two atomics.
	verifyOff atomic.Bool
	expiryMs  atomic.Int64
}

// NewTxnLink returns a link resolving against layers until SetLayers.
func NewTxnLink(layers config.Layers) *TxnLink {
	l := &TxnLink{}
	l.SetLayers(layers)
	return l
}

// SetLayers publishes the broker's config layers (static and dynamic).
func (l *TxnLink) SetLayers(layers config.Layers) {
	value := func(name string) string {
		e, _ := config.ResolveBroker(name, layers)
		return e.Value
	}
	l.verifyOff.Store(value("transaction.partition.verification.enable") == "false")
	l.expiryMs.Store(config.ParseInt(value("producer.id.expiration.ms")))
}

// VerifyFunc asks the coordinator of transactional id whether
// topic/partition is in the transaction open at producer pid and epoch,
// and calls done once, on any goroutine, with its code (NONE: it is).
type VerifyFunc func(transactionalID string, pid int64, epoch int16, topic string, partition int32, done func(kerr.Code))

// SetVerifier installs the verifier; nil leaves batches unverified.
func (l *TxnLink) SetVerifier(fn VerifyFunc) {
	if fn == nil {
		l.verify.Store(nil)
		return
	}
	l.verify.Store(&fn)
}

func (l *TxnLink) verifier() VerifyFunc {
	if l == nil {
		return nil
	}
	if l.verifyOff.Load() {
		return nil
	}
	if fn := l.verify.Load(); fn != nil {
		return *fn
	}
	return nil
}

func (l *TxnLink) expirationMs() int64 {
	if l == nil {
		return ProducerIDExpirationMs
	}
	if ms := l.expiryMs.Load(); ms > 0 {
		return ms
	}
	return ProducerIDExpirationMs
}

// verifyTimeout bounds one verification: a coordinator that never
// answers (an actor that stopped) fails the batch retriably.
const verifyTimeout = 15 * time.Second

// verifySide is the shell's part of KIP-890: the produces waiting for a
// coordinator's answer, by producer id. While one batch of a producer is
// being verified, the producer's later batches wait behind it, in order
// (netloop has several requests of a connection in flight; Kafka handles
// one at a time per connection, so the order is the producer's).
type verifySide struct {
	waiting map[int64]*waitingVerify
	lastID  uint64
	post    func(msg any) // sends to this actor from any goroutine; nil: through the actor system
}

type waitingVerify struct {
	id    uint64
	guard uint64
	queue []*ProduceRequest // [0] is being verified
	timer *time.Timer
}

// verified is a coordinator's answer for the verification id of pid.
type verified struct {
	pid  int64
	id   uint64
	code kerr.Code
}

// queueBehindVerify queues m if its producer has a batch being verified.
func (p *partitionActor) queueBehindVerify(m *ProduceRequest) bool {
	if len(p.waiting) == 0 {
		return false
	}
	h, err := wire.ParseBatchHeader(m.Records)
	if err != nil {
		return false // the core answers it
	}
	w := p.waiting[h.ProducerID]
	if w == nil || h.ProducerID < 0 {
		return false
	}
	w.queue = append(w.queue, m)
	return true
}

// startVerify asks the coordinator about need's batch; the answer comes
// back as a verified message.
func (p *partitionActor) startVerify(need *VerifyNeed) {
	m := need.Ticket.(*ProduceRequest)
	fn := p.txn.verifier()
	if fn == nil { // switched off since the core was asked: append unverified
		m.guard = 0
		p.produceNow(m, false)
		return
	}
	if p.waiting == nil {
		p.waiting = map[int64]*waitingVerify{}
	}
	p.lastID++
	id, pid := p.lastID, need.ProducerID
	post := p.post
	if post == nil {
		self, root := p.self, p.root
		post = func(msg any) { root.Send(self, msg) }
	}
	answer := func(code kerr.Code) { post(&verified{pid: pid, id: id, code: code}) }
	w := &waitingVerify{id: id, guard: need.Guard, queue: []*ProduceRequest{m}}
	w.timer = time.AfterFunc(verifyTimeout, func() { answer(kerr.RequestTimedOut) })
	p.waiting[pid] = w
	fn(need.TransactionalID, pid, need.ProducerEpoch, p.spec.Topic, p.spec.Partition, answer)
}

// onVerified takes a coordinator's answer: the batch is appended (its
// guard permitting) or refused, then the producer's batches queued
// behind it go on, in order.
func (p *partitionActor) onVerified(v *verified) {
	w := p.waiting[v.pid]
	if w == nil || w.id != v.id {
		return // a late answer (the other of answer and timeout)
	}
	w.timer.Stop()
	delete(p.waiting, v.pid)
	head := w.queue[0]
	if v.code == kerr.None {
		head.guard = w.guard
		p.produce(head)
	} else {
		code, msg := VerificationError(v.code, head.Version)
		p.answer(Ack{Ticket: head, Code: code, Msg: msg, BaseOffset: -1, LogAppendTime: -1})
	}
	for _, m := range w.queue[1:] {
		p.produce(m)
	}
}

// dropVerifies answers every produce waiting for a verification: the log
// is closing (the client retries on the new leader or incarnation).
func (p *partitionActor) dropVerifies() {
	for pid, w := range p.waiting {
		w.timer.Stop()
		for _, m := range w.queue {
			p.answer(Ack{Ticket: m, Code: kerr.NotLeaderOrFollower, Msg: "the partition's log closed before the batch was verified", BaseOffset: -1, LogAppendTime: -1})
		}
		delete(p.waiting, pid)
	}
}

// expireProducers applies producer.id.expiration.ms (each retention
// check): idle producers and stale verifications are forgotten.
func (p *partitionActor) expireProducers(now time.Time) {
	if p.core == nil {
		return
	}
	if n := p.core.ExpireProducers(now.UnixMilli(), p.txn.expirationMs()); n > 0 {
		p.log.Debug("idle producer ids expired", append(p.attrs(), "producers", n)...)
	}
}
