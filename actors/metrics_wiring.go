package actors

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/metrics"
	"github.com/samsa-io/samsa/actors/txn"
)

// committedWait bounds how long a metrics scrape waits for the group
// coordinators' committed offsets (a coordinator that is loading, or
// busier than that, is left out of that scrape's lag).
const committedWait = 2 * time.Second

// Metrics are the broker's Prometheus metrics; internal/wiring serves
// their registry on /metrics and adds the network's figures.
func (b *Broker) Metrics() *metrics.Broker { return b.env.Metrics }

// watchMetrics registers the collectors that read the broker's published
// state when scraped.
func (b *Broker) watchMetrics() {
	groups := b.groups
	b.env.Metrics.Watch(metrics.Sources{
		BrokerID: b.cfg.BrokerID,
		Routes:   b.env.Routes,
		Cluster:  b.env.Cluster,
		Committed: func() []metrics.Committed {
			got := groups.Committed(committedWait)
			out := make([]metrics.Committed, len(got))
			for i, c := range got {
				out[i] = metrics.Committed{Group: c.Group, Topic: c.Topic, Partition: c.Partition, Offset: c.Offset}
			}
			return out
		},
	})
	if txns := b.txns; txns != nil {
		e := b.env
		b.env.Metrics.WatchTransactions(func() (metrics.TxnStates, bool) { return openTransactions(e, txns) })
	}
}

// openTransactions asks every transaction coordinator of this broker for
// its transactions and counts the open ones by state, waiting at most
// committedWait; ok is false when one did not answer (loading, or busy).
func openTransactions(e *env.Env, txns *txn.Coordinators) (metrics.TxnStates, bool) {
	pids := txns.PIDs()
	answers := make(chan []txn.Transaction, len(pids))
	for _, pid := range pids {
		e.Send(pid, &txn.Describe{Answer: func(ts []txn.Transaction, ok bool) {
			if !ok {
				ts = nil
			}
			answers <- ts
		}})
	}
	var out metrics.TxnStates
	timeout := time.NewTimer(committedWait)
	defer timeout.Stop()
	for range pids {
		select {
		case ts := <-answers:
			for _, t := range ts {
				switch t.State {
				case txn.Ongoing:
					out.Ongoing++
				case txn.PrepareCommit:
					out.PrepareCommit++
				case txn.PrepareAbort:
					out.PrepareAbort++
				}
			}
		case <-timeout.C:
			return out, false
		}
	}
	return out, true
}

// CaughtUp is nil when this broker has caught up with the cluster: in
// cluster mode, every partition it replicates (as the controller last
// said) has it in its ISR; alone, always. Otherwise it names a partition
// still behind, for /readyz.
func (b *Broker) CaughtUp() error {
	if b.env.Cluster == nil {
		return nil
	}
	view := b.env.Cluster.Load()
	if view == nil || view.ControllerID < 0 {
		return errors.New("no word from a controller yet")
	}
	me := b.cfg.BrokerID
	behind, first := 0, ""
	for name, t := range view.Topics {
		for i, p := range t.Partitions {
			if p == nil || !slices.Contains(p.Replicas, me) || slices.Contains(p.ISR, me) {
				continue
			}
			behind++
			if tp := fmt.Sprintf("%s-%d", name, i); first == "" || tp < first {
				first = tp
			}
		}
	}
	if behind > 0 {
		return fmt.Errorf("%d followed partitions are not in their ISR yet (for example %s)", behind, first)
	}
	return nil
}
