package quota

import (
	"maps"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Alter applies an AlterClientQuotas request: the configs it leads to are
// persisted first and then enforced, so an answered change survives a
// restart. It may block (the file write): call it off the gnet loop. On
// a persistence error nothing changes and the error is returned with the
// response, whose entries the caller fails.
func (m *Manager) Alter(req *kmsg.AlterClientQuotasRequest) (*kmsg.AlterClientQuotasResponse, error) {
	m.alterMu.Lock()
	defer m.alterMu.Unlock()
	base, err := m.current(req)
	if err != nil {
		_, _, resp := PlanAlter(m.Snapshot(), req)
		return resp, err
	}
	next, changed, resp := PlanAlter(base, req)
	if len(changed) == 0 {
		return resp, nil
	}
	if m.persist != nil {
		if err := m.persist(changed, next); err != nil {
			return resp, err
		}
	}
	m.install(next)
	return resp, nil
}

// current is the configs an alteration starts from: those held, with
// the request's entities read again from the store when there is one to
// read (a cluster's ZooKeeper, which any broker may have changed), as
// Kafka reads each entity's znode before changing it.
func (m *Manager) current(req *kmsg.AlterClientQuotasRequest) (Configs, error) {
	held := m.Snapshot()
	if m.read == nil {
		return held, nil
	}
	out := maps.Clone(held)
	for _, en := range req.Entries {
		e, msg := entityOf(en.Entity)
		if msg != "" {
			continue
		}
		cfg, err := m.read(e)
		if err != nil {
			return nil, err
		}
		if len(cfg) == 0 {
			delete(out, e)
		} else {
			out[e] = cfg
		}
	}
	return out, nil
}

// Replace sets one entity's configs (empty: none) as a config watch read
// them, without persisting them. Configs equal to those held change
// nothing (the rates go on).
func (m *Manager) Replace(e Entity, cfg map[string]float64) {
	m.alterMu.Lock()
	defer m.alterMu.Unlock()
	held := m.Snapshot()
	if old, ok := held[e]; maps.Equal(old, cfg) && ok == (len(cfg) > 0) {
		return
	}
	next := maps.Clone(held)
	if len(cfg) == 0 {
		delete(next, e)
	} else {
		next[e] = cfg
	}
	m.install(next)
}
